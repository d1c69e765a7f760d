package io.kipam.cni.shim;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP/1.1 POST over a unix-domain socket, with java.base only. The request closes the
 * connection, so the answer ends at end of stream whatever framing the server picked; chunked
 * bodies are decoded, a Content-Length is honoured. The whole exchange (connect, send, read) has
 * one deadline: when it passes, the channel is closed under whatever blocking call is under way and
 * the call fails with a {@link SocketTimeoutException}.
 */
public final class UnixHttpClient {

  /** An HTTP answer: status, headers with lower-case names, body. */
  public record Response(int status, Map<String, String> headers, byte[] body) {}

  private UnixHttpClient() {}

  /**
   * POSTs {@code body} to {@code path} and reads the whole answer, all within {@code timeout}.
   *
   * @throws SocketTimeoutException if the answer is not complete within {@code timeout}
   */
  public static Response post(Path socket, String path, byte[] body, Duration timeout)
      throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        Deadline deadline = new Deadline(channel, timeout)) {
      try {
        return exchange(channel, socket, path, body);
      } catch (IOException e) {
        if (deadline.expired()) {
          throw new SocketTimeoutException(
              "no complete answer within " + timeout.toSeconds() + " s");
        }
        throw e;
      }
    }
  }

  private static Response exchange(SocketChannel channel, Path socket, String path, byte[] body)
      throws IOException {
    channel.connect(UnixDomainSocketAddress.of(socket));
    String head =
        "POST "
            + path
            + " HTTP/1.1\r\n"
            + "Host: kipam-node\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: "
            + body.length
            + "\r\n"
            + "Connection: close\r\n\r\n";
    var out = Channels.newOutputStream(channel);
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
    return read(Channels.newInputStream(channel));
  }

  static Response read(InputStream in) throws IOException {
    byte[] all = in.readAllBytes();
    int headEnd = indexOf(all, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    if (headEnd < 0) {
      throw new IOException("the daemon closed the connection before a complete HTTP answer");
    }
    String[] lines = new String(all, 0, headEnd, StandardCharsets.ISO_8859_1).split("\r\n");
    String[] statusLine = lines[0].split(" ", 3);
    if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/1.")) {
      throw new IOException("the daemon's answer is not HTTP/1.1: " + lines[0]);
    }
    int status = Integer.parseInt(statusLine[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(
            lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).trim());
      }
    }
    int bodyStart = headEnd + 4;
    byte[] raw = java.util.Arrays.copyOfRange(all, bodyStart, all.length);
    if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      raw = dechunk(raw);
    } else if (headers.containsKey("content-length")) {
      int length = Integer.parseInt(headers.get("content-length"));
      if (length > raw.length) {
        throw new IOException(
            "the daemon's answer ended after " + raw.length + " of " + length + " bytes");
      }
      raw = java.util.Arrays.copyOf(raw, length);
    }
    return new Response(status, headers, raw);
  }

  /**
   * Closes a channel when the time is up, which ends a blocking connect, write or read on it with
   * an {@link java.nio.channels.AsynchronousCloseException}. A blocking channel has no timeouts of
   * its own, and one watcher thread is cheaper to start than a selector.
   */
  private static final class Deadline implements AutoCloseable {
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile boolean expired;

    Deadline(Closeable channel, Duration timeout) {
      Thread watcher =
          new Thread(
              () -> {
                try {
                  if (done.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                    return;
                  }
                  expired = true;
                  channel.close();
                } catch (InterruptedException | IOException e) {
                  // Nothing to do: the call goes on, or has ended anyway.
                }
              },
              "kipam-deadline");
      watcher.setDaemon(true);
      watcher.start();
    }

    boolean expired() {
      return expired;
    }

    @Override
    public void close() {
      done.countDown();
    }
  }

  private static byte[] dechunk(byte[] raw) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    int pos = 0;
    while (true) {
      int lineEnd = indexOf(raw, pos, "\r\n".getBytes(StandardCharsets.US_ASCII));
      if (lineEnd < 0) {
        throw new IOException("truncated chunked answer from the daemon");
      }
      String sizeText = new String(raw, pos, lineEnd - pos, StandardCharsets.US_ASCII);
      int size = Integer.parseInt(sizeText.split(";", 2)[0].trim(), 16);
      if (size == 0) {
        return body.toByteArray();
      }
      int start = lineEnd + 2;
      if (start + size > raw.length) {
        throw new IOException("truncated chunked answer from the daemon");
      }
      body.write(raw, start, size);
      pos = start + size + 2;
    }
  }

  private static int indexOf(byte[] data, byte[] pattern) {
    return indexOf(data, 0, pattern);
  }

  private static int indexOf(byte[] data, int from, byte[] pattern) {
    outer:
    for (int i = from; i <= data.length - pattern.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (data[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
