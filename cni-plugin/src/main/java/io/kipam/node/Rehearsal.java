package io.kipam.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kipam.cni.shim.Kipam;
import io.kipam.cni.shim.UnixHttpClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam-node's call path, run before it reports Ready, so that the first pods of a new node meet
 * compiled code rather than a JVM that compiles while they wait (a new node is when every pending
 * pod arrives at once). Each call goes through the socket as the executable's does: the server, the
 * envelope, the CNI request's parsing and the error answer of a pool that does not exist (on {@code
 * /v1/rehearsal}, which the metrics do not count and which is gone once Ready). None of them
 * reaches the API server: a start costs the cluster nothing but the lists and watches the daemon
 * needs (design §6), and a DaemonSet rollout over thousands of nodes sends no admissions. Nothing
 * here allocates, writes or changes the node's state.
 */
final class Rehearsal {

  private static final Logger log = LoggerFactory.getLogger(Rehearsal.class);

  /** The calls at once, as a node's runtime makes them when pods arrive together. */
  private static final int AT_ONCE = 4;

  /** The rehearsal's longest. */
  static final Duration BUDGET = Duration.ofSeconds(15);

  /** One call's longest, as the executable's own. */
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A pool name no IPPool has: every rehearsed ADD stops at it. */
  private final String noPool = "kipam-rehearsal-" + UUID.randomUUID().toString().substring(0, 8);

  private final Path socket;
  private final int calls;

  Rehearsal(Path socket, int calls) {
    this.socket = socket;
    this.calls = calls;
  }

  /** Makes the calls, {@link #AT_ONCE} at a time, and logs what they answered and how long. */
  void run() throws InterruptedException {
    if (calls == 0) {
      return;
    }
    long start = System.nanoTime();
    long deadline = start + BUDGET.toNanos();
    Map<String, Integer> answers = new ConcurrentSkipListMap<>();
    ExecutorService threads = Executors.newFixedThreadPool(AT_ONCE);
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < AT_ONCE; t++) {
        int first = t;
        work.add(
            threads.submit(
                () -> {
                  for (int i = first; i < calls && System.nanoTime() < deadline; i += AT_ONCE) {
                    answers.merge("socket " + call(i), 1, Integer::sum);
                  }
                }));
      }
      for (Future<?> f : work) {
        f.get();
      }
    } catch (ExecutionException e) {
      log.warn("the rehearsal of the call path stopped early: {}", e.getCause().toString());
    } finally {
      threads.shutdownNow();
    }
    log.info(
        "rehearsed the call path in {} ms ({} calls through the socket, at most {} s): answers {}",
        (System.nanoTime() - start) / 1_000_000,
        calls,
        BUDGET.toSeconds(),
        answers);
  }

  /**
   * One CNI ADD through the socket, with the executable's own envelope and client; the exit code it
   * answered, or what went wrong.
   */
  private String call(int i) {
    try {
      UnixHttpClient.Response answer =
          UnixHttpClient.post(socket, "/v1/rehearsal", envelope(i), CALL_TIMEOUT);
      String code = answer.headers().get("kipam-exit-code");
      if (code == null) {
        return "HTTP " + answer.status();
      }
      String message = JSON.readTree(answer.body()).path("msg").asText("");
      return "exit code "
          + code
          + " ("
          + message.substring(0, Math.min(80, message.length()))
          + ")";
    } catch (IOException e) {
      return e.getClass().getSimpleName();
    }
  }

  /** The envelope of an ADD as the executable sends it, for a pod of no pool. */
  private byte[] envelope(int i) throws IOException {
    ObjectNode config = JSON.createObjectNode();
    config.put("cniVersion", "1.1.0");
    config.put("name", "kipam-rehearsal");
    config.put("type", "kipam");
    config.putObject("ipam").put("type", "kipam").putArray("pools").add(noPool);
    return Kipam.envelope(
        Map.of(
            "CNI_COMMAND",
            "ADD",
            "CNI_CONTAINERID",
            "kipam-rehearsal-" + i,
            "CNI_NETNS",
            "/var/run/netns/kipam-rehearsal-" + i,
            "CNI_IFNAME",
            "eth0",
            "CNI_PATH",
            "/opt/cni/bin",
            "CNI_ARGS",
            "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=kipam-rehearsal-"
                + i
                + ";K8S_POD_INFRA_CONTAINER_ID=kipam-rehearsal-"
                + i
                + ";K8S_POD_UID="
                + UUID.randomUUID()),
        JSON.writeValueAsBytes(config));
  }
}
