package io.kipam.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.shim.Kipam;
import io.kipam.cni.shim.UnixHttpClient;
import io.kipam.cni.spec.Attachment;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.kube.KubernetesStore;
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
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam-node's call path, run before it reports Ready, so that the first pods of a new node meet
 * compiled code rather than a JVM that compiles while they wait (a new node is when every pending
 * pod arrives at once). Each call goes through the socket as the executable's does: the server, the
 * envelope, the CNI request's parsing and the error answer of a pool that does not exist (on {@code
 * /v1/rehearsal}, which the metrics do not count and which is gone once Ready). A third of them, at
 * most {@link #MAX_DRY_RUNS}, also send the IPAddress of an ADD to the API server as a dry run: the
 * same object, serialization, HTTP/2 and TLS as a pod's create; the API server admits and validates
 * it and stores nothing. Nothing here allocates, writes or changes the node's state.
 */
final class Rehearsal {

  private static final Logger log = LoggerFactory.getLogger(Rehearsal.class);

  /** The calls at once, as a node's runtime makes them when pods arrive together. */
  private static final int AT_ONCE = 4;

  /**
   * The rehearsal's longest: a daemon whose API server went away after the watches listed must not
   * wait out a request timeout per dry run before it is Ready.
   */
  static final Duration BUDGET = Duration.ofSeconds(15);

  /** Dry-run creates at most, whatever the calls: each costs the API server an admission. */
  static final int MAX_DRY_RUNS = 200;

  /** One call's longest, as the executable's own. */
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A pool name no IPPool has: every rehearsed ADD stops at it. */
  private final String noPool = "kipam-rehearsal-" + UUID.randomUUID().toString().substring(0, 8);

  private final AtomicBoolean firstRefusal = new AtomicBoolean();
  private final Path socket;
  private final KubernetesStore store;
  private final String node;
  private final int calls;

  Rehearsal(Path socket, KubernetesStore store, String node, int calls) {
    this.socket = socket;
    this.store = store;
    this.node = node;
    this.calls = calls;
  }

  /** Makes the calls, {@link #AT_ONCE} at a time, and logs what they answered and how long. */
  void run() throws InterruptedException {
    if (calls == 0) {
      return;
    }
    long start = System.nanoTime();
    long deadline = start + BUDGET.toNanos();
    int dryRuns = Math.min(MAX_DRY_RUNS, calls / 3);
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
                    if (i < dryRuns) {
                      answers.merge("dry-run create " + dryRun(i), 1, Integer::sum);
                    }
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
        "rehearsed the call path in {} ms ({} calls through the socket, {} dry-run creates"
            + " planned, at most {} s): answers {}",
        (System.nanoTime() - start) / 1_000_000,
        calls,
        dryRuns,
        BUDGET.toSeconds(),
        answers);
  }

  /**
   * A dry-run create's answer: 201, or the refusal's status and reason; the first refusal's message
   * is logged whole (a daemon whose token is of another node is refused by the node admission
   * policy here before any pod's ADD is).
   */
  private String dryRun(int i) {
    KubernetesClientException refused = store.dryRunCreateAddress(lease(i));
    if (refused == null) {
      return "201";
    }
    if (firstRefusal.compareAndSet(false, true)) {
      log.warn("the API server refused a rehearsed dry-run create: {}", refused.getMessage());
    }
    Status status = refused.getStatus();
    return refused.getCode() + (status == null ? "" : " " + status.getReason());
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

  /** An ADD's lease, of a pod that does not exist in namespace {@code default}. */
  private Lease lease(int i) {
    Cidr block = Cidr.parse("198.18.0.0/26");
    return new Lease(
        "kipam-rehearsal",
        IpAddress.parse("198.18.0." + (1 + i % 62)),
        block,
        node,
        "kipam-rehearsal",
        new Attachment("kipam-rehearsal-" + i, "eth0"),
        new PodRef("default", "kipam-rehearsal-" + i, UUID.randomUUID().toString(), false),
        "02:00:00:00:00:01",
        null);
  }
}
