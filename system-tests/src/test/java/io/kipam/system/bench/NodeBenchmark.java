package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonMetrics;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.Exec;
import io.kipam.system.harness.Installer;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kipam-node's speed, printed, never asserted (machines are shared and noisy): ADD and DEL latency
 * through the real executable at 1 and 32 concurrent callers, the executable's start-up next to a
 * bare JVM's, and API writes per allocation counted by kube-apiserver itself. Run with {@code
 * ./mvnw -B -pl system-tests -am verify -Pbenchmark}; docs/benchmarks.md has results.
 */
public class NodeBenchmark {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private final KubernetesClient client = ControlPlane.shared().client();
  private final ControlPlane controlPlane = ControlPlane.shared();

  @Test
  public void measure() throws Exception {
    KipamCrds.install(client);
    Path dir = Files.createTempDirectory("kipam-bench");
    String node = Fixtures.uniqueName("bench-node");
    Fixtures.registerNode(client, node);
    String pool = Cluster.readiedPool(client, "bench", Cluster.spec("10.253.0.0/22", 26, 0));
    String namespace = Fixtures.namespace(client, "bench");
    try (DaemonProcess daemon = new DaemonProcess(dir, node, controlPlane.adminKubeconfig())) {
      Path kipam = Installer.install(dir.resolve("bin"), daemon.socket);
      daemon.start();
      String config = Cluster.config("1.0.0", daemon.socket.toString(), pool);
      await()
          .atMost(Duration.ofSeconds(90))
          .until(
              () ->
                  CniCall.run(
                          kipam, Map.of("CNI_COMMAND", "STATUS"), config.replace("1.0.0", "1.1.0"))
                      .ok());
      List<Pod> pods = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        pods.add(Cluster.pod(client, namespace, "bench-" + i, node));
      }

      Path shim = Installer.installShim(dir.resolve("shim-bin"), daemon.socket);

      System.out.println("\n== kipam-node benchmark ==");
      startup(kipam);
      version("native", kipam);
      version("Java shim", shim);
      // Warm-up: JIT of the daemon and the first block claims, outside the measured phases.
      cycle(kipam, config, namespace, pods.subList(0, 8), 3);
      cycle(shim, config, namespace, pods.subList(0, 8), 1);

      double createsBefore = apiWrites("POST");
      double othersBefore = apiWrites("PUT|PATCH|APPLY|DELETE");
      Stats one = cycle(kipam, config, namespace, pods.subList(0, 1), 100);
      double creates = apiWrites("POST") - createsBefore;
      double others = apiWrites("PUT|PATCH|APPLY|DELETE") - othersBefore;
      report("1 caller", one);
      System.out.printf(
          "API writes per ADD (creates): %.2f; per DEL (updates and deletes): %.2f; %d ADD/DEL"
              + " pairs in the steady state (blocks already claimed)%n",
          creates / one.adds.size(), others / one.dels.size(), one.adds.size());

      Stats many = cycle(kipam, config, namespace, pods.subList(0, 32), 10);
      report("32 callers", many);

      for (int callers : new int[] {8, 32}) {
        for (var exe : Map.of("native", kipam, "Java shim", shim).entrySet()) {
          throughput(exe.getKey(), exe.getValue(), daemon.socket, config, namespace, pods, callers);
        }
      }
    }
  }

  private void version(String label, Path kipam) {
    List<Double> times = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      long start = System.nanoTime();
      CniCall.run(kipam, Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"1.1.0\"}");
      times.add((System.nanoTime() - start) / 1e6);
    }
    System.out.printf(
        "VERSION %-9s p50 %6.1f ms  p99 %6.1f ms  (%d calls; target for native: p50 <= 5 ms)%n",
        label, percentile(times, 50), percentile(times, 99), times.size());
  }

  /**
   * ADDs only, {@code callers} at once for 4 rounds each (then the DELs, unmeasured): calls per
   * second over the phase, p50/p99, and where the mean ADD's time went: the daemon's own histogram
   * ({@code kipam_cni_call_duration_seconds}) against the caller's wall time, and kube-apiserver's
   * time on kipam's writes ({@code apiserver_request_duration_seconds}) within the daemon's.
   */
  private void throughput(
      String label,
      Path kipam,
      Path socket,
      String config,
      String namespace,
      List<Pod> pods,
      int callers)
      throws Exception {
    int rounds = 4;
    double[] daemonBefore = DaemonMetrics.addSeconds(socket);
    double apiBefore = apiSeconds();
    List<Double> adds = Collections.synchronizedList(new ArrayList<>());
    long start = System.nanoTime();
    forEachCall(
        pods.subList(0, callers),
        rounds,
        namespace,
        "ADD",
        env -> adds.add(timed(kipam, env, config)));
    double wall = (System.nanoTime() - start) / 1e9;
    double[] daemonAfter = DaemonMetrics.addSeconds(socket);
    double api = apiSeconds() - apiBefore;
    forEachCall(
        pods.subList(0, callers), rounds, namespace, "DEL", env -> timed(kipam, env, config));
    double n = daemonAfter[1] - daemonBefore[1];
    double daemonMs = (daemonAfter[0] - daemonBefore[0]) / n * 1e3;
    double meanMs = adds.stream().mapToDouble(Double::doubleValue).average().orElse(0);
    double apiMs = api / n * 1e3;
    System.out.printf(
        "ADD %-9s %2d callers: %6.1f calls/s  p50 %6.1f ms  p99 %6.1f ms | mean %6.1f ms ="
            + " executable+socket %6.1f + daemon %6.1f (of which API %5.1f)  (%d calls)%n",
        label,
        callers,
        adds.size() / wall,
        percentile(adds, 50),
        percentile(adds, 99),
        meanMs,
        meanMs - daemonMs,
        daemonMs,
        apiMs,
        adds.size());
  }

  private static void forEachCall(
      List<Pod> pods,
      int rounds,
      String namespace,
      String command,
      java.util.function.Consumer<Map<String, String>> call)
      throws Exception {
    podsInParallel(
        pods,
        rounds,
        (pod, r) -> {
          String name = pod.getMetadata().getName();
          call.accept(
              CniCall.env(
                  command,
                  "t-" + name + "-" + r,
                  "eth0",
                  namespace,
                  name,
                  pod.getMetadata().getUid()));
        });
  }

  /** Rounds 0 to {@code rounds - 1} of {@code round}, one thread a pod, all pods at once. */
  private static void podsInParallel(
      List<Pod> pods, int rounds, java.util.function.ObjIntConsumer<Pod> round) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(pods.size());
    List<Future<?>> work = new ArrayList<>();
    for (Pod pod : pods) {
      work.add(
          threads.submit(
              () -> {
                for (int r = 0; r < rounds; r++) {
                  round.accept(pod, r);
                }
                return null;
              }));
    }
    for (Future<?> f : work) {
      f.get();
    }
    threads.shutdown();
  }

  /** Seconds kube-apiserver spent on write requests for kipam's resources, from its metrics. */
  private double apiSeconds() {
    String metrics = client.raw("/metrics");
    Pattern line =
        Pattern.compile(
            "^apiserver_request_duration_seconds_sum\\{([^}]*)\\} ([0-9.e+-]+)$",
            Pattern.MULTILINE);
    double total = 0;
    Matcher m = line.matcher(metrics);
    while (m.find()) {
      String labels = m.group(1);
      if (labels.contains("group=\"kipam.io\"")
          && labels.matches(".*verb=\"(POST|PUT|PATCH|APPLY|DELETE)\".*")) {
        total += Double.parseDouble(m.group(2));
      }
    }
    return total;
  }

  /** Per-call wall times of ADD and of DEL, in milliseconds. */
  private record Stats(List<Double> adds, List<Double> dels) {}

  private Stats cycle(Path kipam, String config, String namespace, List<Pod> pods, int rounds)
      throws Exception {
    List<Double> adds = Collections.synchronizedList(new ArrayList<>());
    List<Double> dels = Collections.synchronizedList(new ArrayList<>());
    podsInParallel(
        pods,
        rounds,
        (pod, r) -> {
          String cid = "c-" + pod.getMetadata().getName() + "-" + r;
          var env =
              CniCall.env(
                  "ADD",
                  cid,
                  "eth0",
                  namespace,
                  pod.getMetadata().getName(),
                  pod.getMetadata().getUid());
          adds.add(timed(kipam, env, config));
          env.put("CNI_COMMAND", "DEL");
          dels.add(timed(kipam, env, config));
        });
    return new Stats(adds, dels);
  }

  private static double timed(Path kipam, Map<String, String> env, String config) {
    long start = System.nanoTime();
    CniCall.Outcome outcome = CniCall.run(kipam, env, config);
    double ms = (System.nanoTime() - start) / 1e6;
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    return ms;
  }

  private static void report(String label, Stats stats) {
    System.out.printf(
        "%-10s ADD p50 %6.1f ms  p99 %6.1f ms | DEL p50 %6.1f ms  p99 %6.1f ms  (%d calls each)%n",
        label,
        percentile(stats.adds, 50),
        percentile(stats.adds, 99),
        percentile(stats.dels, 50),
        percentile(stats.dels, 99),
        stats.adds.size());
  }

  private void startup(Path kipam) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<Double> bare = new ArrayList<>();
    List<Double> version = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long start = System.nanoTime();
      Exec.run(
              List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-version"),
              Map.of(),
              "")
          .orFail();
      bare.add((System.nanoTime() - start) / 1e6);
      start = System.nanoTime();
      CniCall.run(kipam, Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"1.1.0\"}");
      version.add((System.nanoTime() - start) / 1e6);
    }
    System.out.printf(
        "start-up: bare JVM (java -version) p50 %.1f ms | native kipam VERSION p50 %.1f ms%n",
        percentile(bare, 50), percentile(version, 50));
  }

  /** Write requests kube-apiserver served for kipam's resources, from its own metrics. */
  private double apiWrites(String verbs) {
    String metrics = client.raw("/metrics");
    Pattern line =
        Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", Pattern.MULTILINE);
    double total = 0;
    Matcher m = line.matcher(metrics);
    while (m.find()) {
      String labels = m.group(1);
      boolean kipamResource = labels.contains("group=\"kipam.io\"");
      boolean write = labels.matches(".*verb=\"(" + verbs + ")\".*");
      if (kipamResource && write) {
        total += Double.parseDouble(m.group(2));
      }
    }
    return total;
  }

  private static double percentile(List<Double> values, int p) {
    return Percentiles.of(values, p);
  }
}
