package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.node.server.CniEndpoint;
import io.kipam.node.server.NodeServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A burst of CNI calls, more than the server has threads, each taking the daemon longer than the
 * server's idle timeout, through both executables: every caller gets its answer, as long as it
 * arrives within the caller's own deadline ({@code KIPAM_TIMEOUT_SECONDS}).
 */
class BurstToServerTest {

  /**
   * Long enough that a caller starved of CPU between its connect and its write (100 callers, half
   * of them forking an executable, on two cores) is not taken for an idle one; the daemon's work
   * still outlasts it more than twice.
   */
  private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(2);

  private static final Duration DAEMON_WORK = Duration.ofMillis(4500);
  private static final int CALLERS_EACH = 50;
  private static final String ANSWER = "{\"cniVersion\":\"1.1.0\",\"ips\":[]}";

  @TempDir Path dir;

  @Test
  void everyCallOfABurstIsAnsweredThoughEachOutlastsTheIdleTimeout() throws Exception {
    Path socket = dir.resolve("run/kipam.sock");
    CniEndpoint slow =
        (env, stdin) -> {
          try {
            Thread.sleep(DAEMON_WORK.toMillis());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return new CniEndpoint.Answer(0, ANSWER.getBytes(StandardCharsets.UTF_8));
        };
    String config =
        "{\"cniVersion\":\"1.1.0\",\"ipam\":{\"type\":\"kipam\",\"socket\":\"" + socket + "\"}}";
    byte[] stdin = config.getBytes(StandardCharsets.UTF_8);
    Path kipam = NativeKipam.withDefaultSocket(dir.resolve("bin"), socket);
    ExecutorService callers = Executors.newFixedThreadPool(2 * CALLERS_EACH);
    try (NodeServer server =
        new NodeServer(socket, slow, () -> true, new PrometheusRegistry(), IDLE_TIMEOUT)) {
      server.start();
      List<Future<String>> calls = new ArrayList<>();
      for (int i = 0; i < CALLERS_EACH; i++) {
        Map<String, String> env = env("native-" + i);
        calls.add(callers.submit(() -> "native: " + describe(NativeKipam.run(kipam, env, stdin))));
        Callable<String> shim = shim(env("shim-" + i), stdin, socket);
        calls.add(callers.submit(() -> "shim: " + shim.call()));
      }
      List<String> failures = new ArrayList<>();
      for (Future<String> call : calls) {
        String outcome = call.get();
        if (!outcome.endsWith(": 0 " + ANSWER)) {
          failures.add(outcome);
        }
      }
      System.out.printf("%d of %d calls failed%n", failures.size(), calls.size());
      failures.forEach(System.out::println);
      assertThat(failures).isEmpty();
    } finally {
      callers.shutdownNow();
    }
  }

  private static Map<String, String> env(String containerId) {
    return Map.of(
        "CNI_COMMAND", "ADD", "CNI_CONTAINERID", containerId, "KIPAM_TIMEOUT_SECONDS", "60");
  }

  private static Callable<String> shim(Map<String, String> env, byte[] stdin, Path socket) {
    return () -> {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int exit =
          Kipam.run(
              env,
              new ByteArrayInputStream(stdin),
              new PrintStream(out, true, StandardCharsets.UTF_8),
              socket);
      return exit + " " + out.toString(StandardCharsets.UTF_8);
    };
  }

  private static String describe(NativeKipam.Result result) {
    return result.exit() + " " + result.stdout();
  }
}
