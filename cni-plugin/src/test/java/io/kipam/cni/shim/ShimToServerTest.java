package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.node.server.CniEndpoint;
import io.kipam.node.server.NodeServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The executable and the daemon's real HTTP server agree on the wire. */
class ShimToServerTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @TempDir Path dir;

  /** The daemon's side: keeps the environment and stdin of the last call and gives one answer. */
  private static final class Recording implements CniEndpoint {
    final AtomicReference<Map<String, String>> env = new AtomicReference<>();
    final AtomicReference<String> stdin = new AtomicReference<>();
    private final int exit;
    private final String stdout;

    Recording(int exit, String stdout) {
      this.exit = exit;
      this.stdout = stdout;
    }

    @Override
    public Answer handle(Map<String, String> env, byte[] stdin) {
      this.env.set(new HashMap<>(env));
      this.stdin.set(new String(stdin, StandardCharsets.UTF_8));
      return new Answer(exit, stdout.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** The network configuration of a kipam IPAM on {@code socket}. */
  private static String config(Path socket) {
    return "{\"cniVersion\":\"1.1.0\",\"ipam\":{\"type\":\"kipam\",\"socket\":\"" + socket + "\"}}";
  }

  @Test
  void callTravelsThroughTheSocketAndTheAnswerComesBackVerbatim() throws Exception {
    Path socket = dir.resolve("run/kipam.sock");
    Recording endpoint = new Recording(1, "{\"code\":100,\"msg\":\"exhausted\"}");
    AtomicBoolean ready = new AtomicBoolean(false);
    try (NodeServer server =
        new NodeServer(socket, endpoint, ready::get, new PrometheusRegistry())) {
      server.start();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)))
          .isEqualTo("rw-------");

      String config = config(socket);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int exit =
          Kipam.run(
              Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "abc", "HOME", "/home/tester"),
              new ByteArrayInputStream(config.getBytes(StandardCharsets.UTF_8)),
              new PrintStream(out, true, StandardCharsets.UTF_8),
              socket);

      assertThat(exit).isEqualTo(1);
      assertThat(out.toString(StandardCharsets.UTF_8))
          .isEqualTo("{\"code\":100,\"msg\":\"exhausted\"}");
      assertThat(endpoint.env.get()).containsOnlyKeys("CNI_COMMAND", "CNI_CONTAINERID");
      assertThat(endpoint.stdin.get()).isEqualTo(config);

      assertThat(UnixHttpClient.post(socket, "/readyz", new byte[0], TIMEOUT).status())
          .isEqualTo(503);
      ready.set(true);
      assertThat(UnixHttpClient.post(socket, "/readyz", new byte[0], TIMEOUT).status())
          .isEqualTo(200);
      assertThat(UnixHttpClient.post(socket, "/healthz", new byte[0], TIMEOUT).status())
          .isEqualTo(200);
    }
    assertThat(socket).doesNotExist();
  }

  @Test
  void theNativeBinaryAgreesWithTheRealServerToo() throws Exception {
    Path socket = dir.resolve("run/kipam.sock");
    Recording endpoint = new Recording(0, "{\"cniVersion\":\"1.1.0\",\"ips\":[]}");
    try (NodeServer server =
        new NodeServer(socket, endpoint, () -> true, new PrometheusRegistry())) {
      server.start();
      String config = config(socket);

      NativeKipam.Result result =
          NativeKipam.run(
              NativeKipam.withDefaultSocket(dir.resolve("bin"), socket),
              Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "abc", "HOME", "/home/tester"),
              config.getBytes(StandardCharsets.UTF_8));

      assertThat(result.exit()).isZero();
      assertThat(result.stdout()).isEqualTo("{\"cniVersion\":\"1.1.0\",\"ips\":[]}");
      assertThat(endpoint.env.get())
          .containsExactlyInAnyOrderEntriesOf(
              Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "abc"));
      assertThat(endpoint.stdin.get()).isEqualTo(config);
    }
  }
}
