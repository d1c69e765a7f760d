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

  @Test
  void callTravelsThroughTheSocketAndTheAnswerComesBackVerbatim() throws Exception {
    Path socket = dir.resolve("run/kipam.sock");
    AtomicReference<Map<String, String>> seenEnv = new AtomicReference<>();
    AtomicReference<String> seenStdin = new AtomicReference<>();
    CniEndpoint endpoint =
        (env, stdin) -> {
          seenEnv.set(new HashMap<>(env));
          seenStdin.set(new String(stdin, StandardCharsets.UTF_8));
          return new CniEndpoint.Answer(
              1, "{\"code\":100,\"msg\":\"exhausted\"}".getBytes(StandardCharsets.UTF_8));
        };
    AtomicBoolean ready = new AtomicBoolean(false);
    try (NodeServer server =
        new NodeServer(socket, endpoint, ready::get, new PrometheusRegistry())) {
      server.start();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)))
          .isEqualTo("rw-------");

      String config =
          "{\"cniVersion\":\"1.1.0\",\"ipam\":{\"type\":\"kipam\",\"socket\":\"" + socket + "\"}}";
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int exit =
          Kipam.run(
              Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "abc", "HOME", "/home/tester"),
              new ByteArrayInputStream(config.getBytes(StandardCharsets.UTF_8)),
              new PrintStream(out, true, StandardCharsets.UTF_8));

      assertThat(exit).isEqualTo(1);
      assertThat(out.toString(StandardCharsets.UTF_8))
          .isEqualTo("{\"code\":100,\"msg\":\"exhausted\"}");
      assertThat(seenEnv.get()).containsOnlyKeys("CNI_COMMAND", "CNI_CONTAINERID");
      assertThat(seenStdin.get()).isEqualTo(config);

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
    AtomicReference<Map<String, String>> seenEnv = new AtomicReference<>();
    AtomicReference<String> seenStdin = new AtomicReference<>();
    CniEndpoint endpoint =
        (env, stdin) -> {
          seenEnv.set(new HashMap<>(env));
          seenStdin.set(new String(stdin, StandardCharsets.UTF_8));
          return new CniEndpoint.Answer(
              0, "{\"cniVersion\":\"1.1.0\",\"ips\":[]}".getBytes(StandardCharsets.UTF_8));
        };
    try (NodeServer server =
        new NodeServer(socket, endpoint, () -> true, new PrometheusRegistry())) {
      server.start();
      String config =
          "{\"cniVersion\":\"1.1.0\",\"ipam\":{\"type\":\"kipam\",\"socket\":\"" + socket + "\"}}";

      NativeKipam.Result result =
          NativeKipam.run(
              NativeKipam.BINARY,
              Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "abc", "HOME", "/home/tester"),
              config.getBytes(StandardCharsets.UTF_8));

      assertThat(result.exit()).isZero();
      assertThat(result.stdout()).isEqualTo("{\"cniVersion\":\"1.1.0\",\"ips\":[]}");
      assertThat(seenEnv.get())
          .containsExactlyInAnyOrderEntriesOf(
              Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "abc"));
      assertThat(seenStdin.get()).isEqualTo(config);
    }
  }
}
