package io.kipam.system.harness;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads kipam-node's own {@code /metrics} over its socket. */
public final class DaemonMetrics {

  private DaemonMetrics() {}

  /** Sum (seconds) and count of the daemon's ADD calls, from kipam_cni_call_duration_seconds. */
  public static double[] addSeconds(Path socket) throws IOException {
    String metrics = get(socket, "/metrics");
    return new double[] {
      value(metrics, "kipam_cni_call_duration_seconds_sum"),
      value(metrics, "kipam_cni_call_duration_seconds_count")
    };
  }

  /** The sum of every sample of the counter {@code name}, whatever its labels. */
  public static double sum(Path socket, String name) throws IOException {
    Matcher m =
        Pattern.compile("^" + name + "(\\{[^}]*\\})? ([0-9.eE+-]+)$", Pattern.MULTILINE)
            .matcher(get(socket, "/metrics"));
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(2));
    }
    return sum;
  }

  /** Every sample of the counter {@code name}, by its label set as printed ({@code ""}: none). */
  public static java.util.Map<String, Double> samples(Path socket, String name) throws IOException {
    Matcher m =
        Pattern.compile("^" + name + "(\\{[^}]*\\})? ([0-9.eE+-]+)$", Pattern.MULTILINE)
            .matcher(get(socket, "/metrics"));
    java.util.Map<String, Double> samples = new java.util.TreeMap<>();
    while (m.find()) {
      samples.put(m.group(1) == null ? "" : m.group(1), Double.parseDouble(m.group(2)));
    }
    return samples;
  }

  private static double value(String metrics, String name) {
    Matcher m =
        Pattern.compile(
                "^" + name + "\\{[^}]*command=\"ADD\"[^}]*\\} ([0-9.eE+-]+)$", Pattern.MULTILINE)
            .matcher(metrics);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  private static String get(Path socket, String path) throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      String request = "GET " + path + " HTTP/1.1\r\nHost: kipam-node\r\nConnection: close\r\n\r\n";
      channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
      return new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
