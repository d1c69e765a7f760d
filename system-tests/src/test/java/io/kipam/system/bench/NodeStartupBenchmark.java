package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.node.NodeSettings;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonMetrics;
import io.kipam.system.harness.Exec;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.system.harness.Whereabouts;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.ImageTarball;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * kipam-node from its first pod, and its memory, printed, never asserted. At the daemon's defaults
 * (write budget, settle and GC grace included), as its image runs it: the image's tarball unpacked
 * (its Java 25 runtime, jars, entrypoint options, environment and AOT cache). The pods are created
 * before the daemon starts, as on a new node. Printed: what a start costs the cluster (every API
 * request from the process's start to Ready, by verb and resource, from the daemon's own {@code
 * kipam_node_api_requests_total}); the time from the process's start to 200 pods served, 8 ADDs at
 * once, each tried again every 100 ms while the daemon cannot serve it yet, for the image, the
 * image without its AOT cache, with the rehearsal it no longer makes, and the runtime of the image
 * before (Java 17), in rounds whose order a printed seed draws; churn at the defaults; the same 200
 * on a warm daemon (after 1,000 ADD/DEL pairs), on the image and on Java 17; whereabouts' first 200
 * on the same pods; then, in a memory cgroup limited as the DaemonSet limits kipam-node, the write
 * budget raised, with 110 live pods over 20 pools after 10,000 ADD/DEL cycles, its resident memory
 * with the JVM's own breakdown. One daemon on a control plane of its own with kipam-operator; every
 * call through the installed executable, pods over three namespaces. Build the images first; run
 * with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=NodeStartupBenchmark}; docs/benchmarks.md has results.
 */
public class NodeStartupBenchmark {

  private static final int PODS = 200;
  private static final int AT_ONCE = 8;
  private static final int WARM_UP_PAIRS = 1_000;
  private static final int LIVE_PODS = 110;
  private static final int CYCLES = 10_000;
  private static final int CHURN_PODS = 64;

  /**
   * For the memory phase only, the daemon's write budget raised (50/s, burst 250 by default; a
   * cycle is three writes), so 10,000 cycles take minutes.
   */
  private static final Map<String, String> SETTINGS =
      Map.of("KIPAM_API_QPS", "1000", "KIPAM_API_BURST", "1000");

  /**
   * Native memory tracking (its account of every category in the memory line) with {@code
   * -Dkipam.bench.nmt=true}; off by default, as in the image: it costs a daemon some 3 MiB of its
   * own and a header on every native allocation, so the RSS it prints would not be a node's.
   */
  private static final boolean NATIVE_MEMORY_TRACKING = Boolean.getBoolean("kipam.bench.nmt");

  /**
   * The memory phase (10,000 cycles, some minutes) left out with {@code
   * -Dkipam.bench.memory=false}, to compare starts alone.
   */
  private static final boolean MEMORY =
      Boolean.parseBoolean(System.getProperty("kipam.bench.memory", "true"));

  /**
   * whereabouts' first 200 on the same pods, as its DaemonSet leaves it: no daemon to start, each
   * call the plugin's own process reading and writing its IPPool and reservations in the API, its
   * default settings, 8 at once; a failed ADD is tried again after 100 ms, as the runtime would.
   */
  private static void whereaboutsFirst200(
      KubernetesClient client, ControlPlane controlPlane, KipamProcesses processes, NodeRig rig)
      throws Exception {
    Path dir = Whereabouts.build();
    Whereabouts.installCrds(client, dir.resolve("crds"));
    Path settings =
        Whereabouts.writeSettings(
            processes.dir.resolve("whereabouts.conf"), controlPlane.adminKubeconfig());
    String config =
        "{\"cniVersion\":\"1.0.0\",\"name\":\"startup-whereabouts\",\"type\":\"bridge\","
            + "\"ipam\":{\"type\":\"whereabouts\",\"range\":\"10.218.0.0/22\","
            + "\"configuration_path\":\""
            + settings
            + "\"}}";
    ComparedIpam whereabouts =
        new ComparedIpam.Cni("whereabouts", pod -> dir.resolve("whereabouts"), pod -> config);
    java.util.concurrent.atomic.AtomicInteger retries =
        new java.util.concurrent.atomic.AtomicInteger();
    long start = System.nanoTime();
    List<Double> served = java.util.Collections.synchronizedList(new ArrayList<>());
    int failed =
        servedOverTime(
            start,
            served,
            i -> {
              ComparedIpam.Attempt attempt = whereabouts.add(rig.pod(i), "wb-" + i);
              while (!attempt.ok() && System.nanoTime() - start < 120e9) {
                retries.incrementAndGet();
                sleep(100);
                attempt = whereabouts.add(rig.pod(i), "wb-" + i);
              }
              return attempt.ok();
            });
    CURVES.put("whereabouts (from its first ADD)", served);
    BenchmarkCharts.served(
        Path.of("target", "benchmark-report", "node-startup-first-200.png"),
        "The first 200 pods, 8 ADDs at once: served over time",
        "seconds since the process's start (warm and whereabouts: since their first ADD)",
        CURVES);
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        "whereabouts' first %d (its default settings; no daemon, each call a process of its"
            + " own): %.2f s, %d at once, %d ADDs tried again, %d failed%n",
        PODS, seconds, AT_ONCE, retries.get(), failed);
    assertThat(failed).as("whereabouts ADDs failed").isZero();
    striped(
        PODS,
        i -> {
          whereabouts.del(rig.pod(i), "wb-" + i);
          return true;
        });
  }

  /**
   * Each start variant's first round, the warm daemon and whereabouts: when each of the 200 was
   * served, drawn as one chart.
   */
  private static final Map<String, List<Double>> CURVES =
      java.util.Collections.synchronizedMap(new LinkedHashMap<>());

  /** The memory phase's pools: its 110 live pods are spread over them. */
  private static final int POOLS = 20;

  /** The memory limit of kipam-node's container in config/node/daemonset.yaml, in bytes. */
  private static long daemonSetMemoryLimit() throws java.io.IOException {
    Path file =
        Path.of(System.getProperty("kipam.configDir", "../config")).resolve("node/daemonset.yaml");
    io.fabric8.kubernetes.api.model.apps.DaemonSet daemonSet;
    try (var in = java.nio.file.Files.newInputStream(file)) {
      daemonSet =
          new io.fabric8.kubernetes.client.utils.KubernetesSerialization()
              .unmarshal(in, io.fabric8.kubernetes.api.model.apps.DaemonSet.class);
    }
    return io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(
            daemonSet.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> c.getName().equals("kipam-node"))
                .findFirst()
                .orElseThrow()
                .getResources()
                .getLimits()
                .get("memory"))
        .longValueExact();
  }

  /** Rounds of the start variants, each round in its own order. */
  private static final int ROUNDS = Integer.getInteger("kipam.bench.rounds", 3);

  /**
   * kipam-node's image as the build wrote it ({@code images/target/kipam-node-image.tar}), unpacked
   * under target/: the benchmark runs the image's runtime, jars and AOT cache.
   */
  private static ImageTarball nodeImage() throws java.io.IOException {
    Path tarball =
        Path.of(System.getProperty("kipam.imagesDir", "../images/target"))
            .resolve("kipam-node-image.tar");
    if (!java.nio.file.Files.exists(tarball)) {
      throw new IllegalStateException(
          tarball
              + " is missing: build the images first (./mvnw -B -pl images/node -am package"
              + " -DskipUnit -DskipIT -DskipE2E)");
    }
    Path into = Path.of("target", "node-image");
    if (java.nio.file.Files.exists(into)) {
      try (var files = java.nio.file.Files.walk(into)) {
        for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
          java.nio.file.Files.delete(file);
        }
      }
    }
    return ImageTarball.unpack(tarball, into.toAbsolutePath());
  }

  private static final String[] NMT = {"-XX:NativeMemoryTracking=summary"};

  @Test
  public void measure() throws Exception {
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("startup-bench")) {
      KubernetesClient client = processes.client();
      ControlPlane controlPlane = processes.controlPlane();
      processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("bench");
      Cluster.poolOnItsNetworkReadiedByOperator(client, pool, Cluster.spec("10.214.0.0/22", 26, 0));
      List<String> memoryPools = new ArrayList<>();
      for (int p = 0; p < POOLS; p++) {
        memoryPools.add(Fixtures.uniqueName("mem" + p));
        Cluster.poolOnItsNetworkReadiedByOperator(
            client, memoryPools.get(p), Cluster.spec("10.216." + p + ".0/24", 27, 0));
      }

      NodeRig rig =
          processes.nodeWith(
              pool,
              Map.of(),
              daemon ->
                  daemon
                      .withTheImagesClassData()
                      .withJvmOptions(NATIVE_MEMORY_TRACKING ? NMT : new String[0])
                      .withJvmOptions(extraJvmOptions()));
      for (int i = 0; i < PODS + CHURN_PODS; i++) {
        rig.pod(i); // the pods exist before the daemon starts, as pending pods of a new node
      }

      System.out.println("\n== kipam-node from its first pod, at its defaults ==");
      // The daemon as its image runs it, at its defaults (the harness shortens two timers).
      ImageTarball image = nodeImage();
      rig.daemon
          .asImage(image, true)
          .withEnv("KIPAM_GC_GRACE_SECONDS", "60")
          .withEnv("KIPAM_SETTLE_SECONDS", "30");
      // What a start costs the cluster: the daemon started again, nothing asked of it.
      rig.restart();
      double toReady = (System.nanoTime() - rig.daemon.startedAt()) / 1e9;
      Map<String, Double> startRequests =
          DaemonMetrics.samples(rig.daemon.socket, "kipam_node_api_requests_total");
      System.out.printf(
          "kipam-node from process start to Ready (STATUS through kipam succeeds, asked every 100"
              + " ms): %.2f s%n",
          toReady);
      System.out.println(
          "a start's API requests, by verb and resource: " + requests(startRequests));

      // The start as the image makes it, and without each thing it keeps for its first pods: the
      // AOT cache, Java 25 (the runtime of the image before it, Java 17 with the JDK's own class
      // data), and with the rehearsal it no longer makes. Rounds in an order drawn from the seed,
      // so that a slow moment of the machine does not fall on one variant only.
      Map<String, Runnable> variants = new LinkedHashMap<>();
      variants.put(
          "the image (Java 25, its AOT cache)",
          () -> rig.daemon.asImage(image, true).withEnv("KIPAM_REHEARSAL_CALLS", "0"));
      variants.put(
          "the image without its AOT cache",
          () -> rig.daemon.asImage(image, false).withEnv("KIPAM_REHEARSAL_CALLS", "0"));
      variants.put(
          "the image with a rehearsal of 600 calls before Ready",
          () -> rig.daemon.asImage(image, true).withEnv("KIPAM_REHEARSAL_CALLS", "600"));
      variants.put(
          "Java 17 and the JDK's class data only (the image before)",
          () ->
              rig.daemon
                  .notAsImage()
                  .withTheImagesClassData()
                  .withEnv("KIPAM_REHEARSAL_CALLS", "0"));
      long seed = Long.getLong("kipam.seed", System.nanoTime());
      java.util.Random random = new java.util.Random(seed);
      System.out.printf("start variants: %d rounds, order from seed %d%n", ROUNDS, seed);
      Map<String, List<Double>> starts = new LinkedHashMap<>();
      variants.keySet().forEach(how -> starts.put(how, new ArrayList<>()));
      for (int round = 1; round <= ROUNDS; round++) {
        List<String> order = new ArrayList<>(variants.keySet());
        java.util.Collections.shuffle(order, random);
        for (String how : order) {
          variants.get(how).run();
          starts.get(how).add(startTo200(rig, pool, how + ", round " + round));
          assertThat(striped(PODS, i -> rig.del(pool, i).ok())).as("failed DELs").isZero();
        }
      }
      rig.daemon
          .asImage(image, true)
          .withEnv("KIPAM_REHEARSAL_CALLS", String.valueOf(NodeSettings.DEFAULT_REHEARSAL_CALLS))
          .kill();
      rig.daemon.start();
      rig.daemon.awaitReady(rig.kipam, rig.statusPool());
      long pid = rig.daemon.pid();
      ProcessCpu cpu = new ProcessCpu(Map.of("kipam-node", List.of(pid)));

      ProcessCpu.Snapshot beforePairs = cpu.snapshot();
      long pairsStart = System.nanoTime();
      int failedPairs =
          striped(
              WARM_UP_PAIRS,
              k -> rig.add(pool, k % PODS).ok() & rig.del(pool, k % PODS).ok()); // DEL even so
      double pairSeconds = (System.nanoTime() - pairsStart) / 1e9;
      assertThat(failedPairs).as("failed ADD/DEL pairs").isZero();
      System.out.printf(
          "churn at the defaults: %d ADD/DEL pairs, %d at once, %.1f pairs/s (kipam-node's CPU"
              + " %.2f of %d cores); the write budget allows %.1f pairs/s after its burst (%s"
              + " writes/s, 3 writes a pair: the ADD's create, the DEL's delete and finalizer"
              + " removal)%n",
          WARM_UP_PAIRS,
          AT_ONCE,
          WARM_UP_PAIRS / pairSeconds,
          cpu.since(beforePairs, pairSeconds).seconds().get("kipam-node") / pairSeconds,
          Runtime.getRuntime().availableProcessors(),
          50 / 3.0,
          "50");
      Thread.sleep(3000); // the DELs' watch events and status writes are done
      Map<String, Double> threadsBeforeWarm = ProcessCpu.byThread(pid);
      Phase warm = adds(rig, pool, cpu);
      System.out.println(
          "warm: " + warm.describe("the same ADDs after " + WARM_UP_PAIRS + " ADD/DEL pairs"));
      assertThat(warm.failed()).as("failed ADDs, warm").isZero();
      System.out.println(
          "  " + byThread("the same ADDs, warm", threadsBeforeWarm, ProcessCpu.byThread(pid)));
      Phase warm17 = warmOnJava17(rig, pool);
      System.out.println(
          "warm on Java 17 (the image before), the same ADDs after as many pairs: "
              + warm17.describe("the same")
              + "; the image's warm daemon took "
              + String.format("%.2f s", warm.seconds()));
      rig.daemon.asImage(image, true).kill(); // the memory phase starts it again
      starts.forEach(
          (how, seconds) -> {
            List<Double> sorted = seconds.stream().sorted().toList();
            double median = sorted.get(sorted.size() / 2);
            System.out.printf(
                "start to %d served, %s: median %.2f s of %d (%.2f to %.2f), %.2fx the warm"
                    + " daemon's %.2f s%n",
                PODS,
                how,
                median,
                sorted.size(),
                sorted.get(0),
                sorted.get(sorted.size() - 1),
                median / warm.seconds(),
                warm.seconds());
          });

      whereaboutsFirst200(client, controlPlane, processes, rig);
      if (!MEMORY) {
        return;
      }
      // The memory phase: thousands of cycles, the write budget raised so they take minutes, in a
      // memory cgroup limited as the DaemonSet limits kipam-node's container; 110 live pods over
      // 20 pools.
      rig.daemon.kill();
      SETTINGS.forEach(rig.daemon::withEnv);
      long limit = daemonSetMemoryLimit();
      rig.daemon.inMemoryCgroup(limit).start();
      rig.daemon.awaitReady(rig.kipam, rig.statusPool());
      pid = rig.daemon.pid();
      assertThat(striped(PODS, k -> rig.del(pool, k).ok())).as("failed DELs").isZero();
      assertThat(striped(LIVE_PODS, k -> rig.add(memoryPools.get(k % POOLS), k).ok()))
          .as("failed ADDs of the live pods")
          .isZero();
      long start = System.nanoTime();
      int failedCycles =
          striped(
              CYCLES,
              c -> {
                int pod = PODS + c % CHURN_PODS; // a worker's cycles keep to its own pods
                String its = memoryPools.get(pod % POOLS);
                return rig.add(its, pod).ok() & rig.del(its, pod).ok();
              });
      double churnSeconds = (System.nanoTime() - start) / 1e9;
      assertThat(failedCycles).as("failed ADD/DEL cycles").isZero();
      memory(pid, churnSeconds);
      Map<String, Long> cgroup = rig.daemon.cgroupMemory();
      System.out.printf(
          "  in a memory cgroup limited to %d MiB, as config/node/daemonset.yaml limits kipam-node:"
              + " working set %.0f MiB (usage less inactive file pages, what kubelet compares with"
              + " the limit), usage %.0f MiB%n",
          limit >> 20, cgroup.get("workingSet") / 1048576.0, cgroup.get("usage") / 1048576.0);
    }
  }

  /**
   * Kills the daemon, starts it again and sends the 200 ADDs at once, each tried again after 100 ms
   * while the daemon cannot serve it yet, as a runtime does; prints and returns the seconds from
   * the process's start to the 200th served.
   */
  private static double startTo200(NodeRig rig, String pool, String how) throws Exception {
    if (rig.daemon.alive()) {
      rig.daemon.kill();
    }
    rig.daemon.start();
    long startedAt = rig.daemon.startedAt();
    ProcessCpu cpu = new ProcessCpu(Map.of("kipam-node", List.of(rig.daemon.pid())));
    ProcessCpu.Snapshot atStart = cpu.snapshot();
    long pid = rig.daemon.pid();
    java.util.concurrent.atomic.AtomicLong firstServed =
        new java.util.concurrent.atomic.AtomicLong();
    List<Double> served = java.util.Collections.synchronizedList(new ArrayList<>());
    int failed =
        striped(
            PODS,
            i -> {
              CniCall.Outcome outcome = rig.add(pool, i);
              while (!outcome.ok() && System.nanoTime() - startedAt < 120e9) {
                sleep(100);
                outcome = rig.add(pool, i);
              }
              long now = System.nanoTime();
              firstServed.compareAndSet(0, now);
              served.add((now - startedAt) / 1e9);
              return outcome.ok();
            });
    CURVES.putIfAbsent(how.replaceAll(", round \\d+$", ""), served);
    double seconds = (System.nanoTime() - startedAt) / 1e9;
    double cpuSeconds = cpu.since(atStart, seconds).seconds().get("kipam-node");
    assertThat(failed).as("failed ADDs from the start").isZero();
    System.out.printf(
        "start to %d served, %s: %.2f s from the process's start (first served at %.2f s), %d"
            + " at once; kipam-node's CPU %.2f s%n",
        PODS, how, seconds, (firstServed.get() - startedAt) / 1e9, AT_ONCE, cpuSeconds);
    System.out.println("  " + byThread("the same start", Map.of(), ProcessCpu.byThread(pid)));
    return seconds;
  }

  /** {@code kipam_node_api_requests_total}'s samples as "verb resource count", largest first. */
  private static String requests(Map<String, Double> samples) {
    Pattern labels =
        Pattern.compile(
            "verb=\"([^\"]*)\".*resource=\"([^\"]*)\"|resource=\"([^\"]*)\".*verb=\"([^\"]*)\"");
    List<String> parts = new ArrayList<>();
    double total = 0;
    for (Map.Entry<String, Double> e :
        samples.entrySet().stream()
            .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
            .toList()) {
      Matcher m = labels.matcher(e.getKey());
      String kind =
          !m.find()
              ? e.getKey()
              : m.group(1) != null ? m.group(1) + " " + m.group(2) : m.group(4) + " " + m.group(3);
      parts.add(String.format("%s %.0f", kind, e.getValue()));
      total += e.getValue();
    }
    return String.format("%.0f: %s", total, String.join(", ", parts));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The daemon's CPU seconds between two readings of {@link ProcessCpu#byThread}, by thread group,
   * largest first (groups under 10 ms left out): compiling, collecting, or running calls.
   */
  private static String byThread(
      String what, Map<String, Double> before, Map<String, Double> after) {
    StringBuilder line = new StringBuilder(what + ", kipam-node's CPU by thread:");
    after.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0.0)))
        .filter(e -> e.getValue() >= 0.01)
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> line.append(String.format(" %s %.2f s;", e.getKey(), e.getValue())));
    return line.toString();
  }

  /** A measured phase: ADDs per second, the daemon's CPU per ADD. */
  private record Phase(double perSecond, double cpuMsPerAdd, double seconds, int failed) {
    String describe(String what) {
      return String.format(
          "%s, %d at once: %.1f ADDs/s (%d in %.2f s), %.1f ms of kipam-node's CPU per ADD,"
              + " %d failed",
          what, AT_ONCE, perSecond, PODS, seconds, cpuMsPerAdd, failed);
    }
  }

  /**
   * The warm phase again on the runtime of the image before (Java 17, the JDK's class data only):
   * so that a steady-state cost of the image's runtime would show beside its faster start.
   */
  private static Phase warmOnJava17(NodeRig rig, String pool) throws Exception {
    assertThat(striped(PODS, i -> rig.del(pool, i).ok())).as("failed DELs").isZero();
    rig.daemon.notAsImage().withTheImagesClassData().kill();
    rig.daemon.start();
    rig.daemon.awaitReady(rig.kipam, rig.statusPool());
    ProcessCpu cpu = new ProcessCpu(Map.of("kipam-node", List.of(rig.daemon.pid())));
    assertThat(
            striped(
                WARM_UP_PAIRS, k -> rig.add(pool, k % PODS).ok() & rig.del(pool, k % PODS).ok()))
        .as("failed ADD/DEL pairs on Java 17")
        .isZero();
    Thread.sleep(3000);
    Phase warm = adds(rig, pool, cpu);
    assertThat(warm.failed()).as("failed ADDs, warm on Java 17").isZero();
    return warm;
  }

  /** ADD of pods 0 to 199, {@link #AT_ONCE} at a time. */
  private static Phase adds(NodeRig rig, String pool, ProcessCpu cpu) throws Exception {
    ProcessCpu.Snapshot before = cpu.snapshot();
    long start = System.nanoTime();
    List<Double> served = java.util.Collections.synchronizedList(new ArrayList<>());
    int failed = servedOverTime(start, served, i -> rig.add(pool, i).ok());
    CURVES.putIfAbsent("warm (from its first ADD)", served);
    double seconds = (System.nanoTime() - start) / 1e9;
    double cpuSeconds = cpu.since(before, seconds).seconds().get("kipam-node");
    return new Phase(PODS / seconds, cpuSeconds / PODS * 1e3, seconds, failed);
  }

  /**
   * The first {@link #PODS} calls, {@link #striped}; when each ended, in seconds since {@code
   * start}, is added to {@code served}. How many calls answered false.
   */
  private static int servedOverTime(long start, List<Double> served, IntPredicate call)
      throws Exception {
    return striped(
        PODS,
        i -> {
          boolean ok = call.test(i);
          served.add((System.nanoTime() - start) / 1e9);
          return ok;
        });
  }

  /**
   * Calls {@code call} for 0 to {@code count - 1} on {@link #AT_ONCE} threads, thread {@code w}
   * taking {@code w}, {@code w + AT_ONCE}, ...; so call {@code k}'s pod, {@code k} modulo a
   * multiple of {@code AT_ONCE} (plus a constant), is only ever used by one thread at a time. How
   * many calls answered false.
   */
  private static int striped(int count, IntPredicate call) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(AT_ONCE);
    try {
      List<Future<Integer>> work = new ArrayList<>();
      for (int w = 0; w < AT_ONCE; w++) {
        int first = w;
        work.add(
            threads.submit(
                () -> {
                  int failed = 0;
                  for (int k = first; k < count; k += AT_ONCE) {
                    failed += call.test(k) ? 0 : 1;
                  }
                  return failed;
                }));
      }
      int failed = 0;
      for (Future<Integer> f : work) {
        failed += f.get();
      }
      return failed;
    } finally {
      threads.shutdown();
    }
  }

  /**
   * The daemon's resident memory now and at its peak, then the JVM's own account: native memory
   * tracking's committed memory by category, and the heap and metaspace in use after a full GC.
   */
  private static void memory(long pid, double churnSeconds) {
    double rss = ProcessCpu.rssMiB(pid);
    String peak = ProcessCpu.peakRss(List.of(pid)).get(0);
    System.out.printf(
        "memory: %d live pods after %d ADD/DEL cycles (%d at once, %.0f cycles/s): kipam-node RSS"
            + " %.0f MiB (peak %s)%n",
        LIVE_PODS, CYCLES, AT_ONCE, CYCLES / churnSeconds, rss, peak);
    System.out.println("  " + ProcessCpu.residentParts(pid));
    System.out.println("  " + jvmAccount(pid));
    if (NATIVE_MEMORY_TRACKING) {
      System.out.println("  " + nativeMemory(jcmd(pid, "VM.native_memory", "summary")));
    }
    System.out.println("  threads by name: " + ProcessCpu.threadCounts(pid));
    jcmd(pid, "GC.run");
    System.out.println("  " + heapInUse(jcmd(pid, "GC.heap_info"), jcmd(pid, "VM.metaspace")));
    System.out.println("  what the heap holds after a full GC, the largest classes:");
    List<String> histogram = jcmd(pid, "GC.class_histogram").lines().skip(3).toList();
    histogram.stream().limit(12).forEach(line -> System.out.println("    " + line.strip()));
    System.out.println("  and the largest of kipam's, the client's, Jackson's and Jetty's:");
    histogram.stream()
        .filter(
            line ->
                line.matches(".*\\b(io\\.kipam|io\\.fabric8|com\\.fasterxml|org\\.eclipse)\\..*"))
        .limit(12)
        .forEach(line -> System.out.println("    " + line.strip()));
  }

  /**
   * JVM options for kipam-node beyond the image's ({@code -Dkipam.bench.nodeJvmOptions="-XX:A
   * -XX:B"}), to try a setting against the same run's figures before it goes into the image.
   */
  private static String[] extraJvmOptions() {
    String options = System.getProperty("kipam.bench.nodeJvmOptions", "").strip();
    return options.isEmpty() ? new String[0] : options.split("\\s+");
  }

  private static String jcmd(long pid, String... command) {
    List<String> line = new ArrayList<>();
    line.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
    line.add(Long.toString(pid));
    line.addAll(List.of(command));
    return Exec.run(line, Map.of(), "").orFail().stdout();
  }

  private static final Pattern USED = Pattern.compile("\\bused=(\\d+)Kb");

  /**
   * The JVM's own account without native memory tracking: the heap's generations and metaspace as
   * committed now ({@code GC.heap_info}, before the full GC below), the code cache in use ({@code
   * Compiler.codecache}, its heaps summed) and the threads.
   */
  private static String jvmAccount(long pid) {
    StringBuilder out = new StringBuilder("the JVM's own account, MiB:");
    String heap = jcmd(pid, "GC.heap_info");
    Matcher g = GENERATION.matcher(heap);
    double committed = 0;
    while (g.find()) {
      committed += mib(g, 2);
      out.append(
          String.format(
              " %s generation %.1f committed (%.1f used),", generation(g), mib(g, 2), mib(g, 3)));
    }
    out.append(String.format(" heap %.1f committed;", committed));
    Matcher m = METASPACE.matcher(heap + jcmd(pid, "VM.metaspace"));
    if (m.find()) {
      out.append(
          String.format(
              " metaspace (class space in it) %.1f committed (%.1f used);", mib(m, 2), mib(m, 1)));
    }
    Matcher code = USED.matcher(jcmd(pid, "Compiler.codecache"));
    long codeKb = 0;
    while (code.find()) {
      codeKb += Long.parseLong(code.group(1));
    }
    out.append(String.format(" code cache %.1f used;", codeKb / 1024.0));
    int threads = ProcessCpu.threadCounts(pid).values().stream().mapToInt(i -> i).sum();
    return out.append(String.format(" %d threads", threads)).toString();
  }

  private static final Pattern TOTAL =
      Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB", Pattern.MULTILINE);
  private static final Pattern CATEGORY =
      Pattern.compile(
          "^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)\\s*$", Pattern.MULTILINE);
  private static final Pattern THREADS = Pattern.compile("\\(thread #(\\d+)\\)");

  /** One line of {@code VM.native_memory summary}: committed MiB, the categories of 1 MiB up. */
  private static String nativeMemory(String summary) {
    Matcher total = TOTAL.matcher(summary);
    Matcher threads = THREADS.matcher(summary);
    Map<String, Double> committed = new LinkedHashMap<>();
    Matcher m = CATEGORY.matcher(summary);
    while (m.find()) {
      committed.put(m.group(1), mib(m, 3));
    }
    StringBuilder out =
        new StringBuilder(
            String.format(
                "the JVM's own account (native memory tracking), committed MiB: total %.1f;",
                total.find() ? mib(total, 2) : Double.NaN));
    double rest = 0;
    for (var category : committed.entrySet()) {
      if (category.getValue() < 1) {
        rest += category.getValue();
        continue;
      }
      out.append(String.format(" %s %.1f", category.getKey(), category.getValue()));
      if (category.getKey().equals("Thread") && threads.find()) {
        out.append(" (").append(threads.group(1)).append(" threads)");
      }
      out.append(',');
    }
    return out.append(String.format(" the rest %.1f", rest)).toString();
  }

  /**
   * A generation of the serial collector: "def new generation" and "tenured generation" up to Java
   * 21, "DefNew" and "Tenured" since; group 1 "new" or "tenured".
   */
  private static final Pattern GENERATION =
      Pattern.compile("(?i)(?:def )?(new|tenured)(?: generation)?\\s+total (\\d+)K, used (\\d+)K");

  private static final Pattern METASPACE =
      Pattern.compile("Metaspace\\s+used (\\d+)K, committed (\\d+)K");

  /**
   * One line of {@code GC.heap_info} (the serial collector's generations), right after a full GC:
   * what the heap holds.
   */
  private static String heapInUse(String info) {
    return heapInUse(info, "");
  }

  /** As {@link #heapInUse(String)}, metaspace from {@code metaspace} where the heap has none. */
  private static String heapInUse(String info, String metaspace) {
    StringBuilder out = new StringBuilder("after a full GC:");
    Matcher g = GENERATION.matcher(info);
    while (g.find()) {
      out.append(
          String.format(
              " %s generation %.1f MiB used of %.1f,", generation(g), mib(g, 3), mib(g, 2)));
    }
    Matcher m = METASPACE.matcher(info + metaspace);
    if (m.find()) {
      out.append(String.format(" metaspace %.1f MiB used of %.1f", mib(m, 1), mib(m, 2)));
    }
    return out.toString();
  }

  /** The young or the old generation, as a {@code GENERATION} match names it. */
  private static String generation(Matcher g) {
    return g.group(1).equalsIgnoreCase("new") ? "young" : "old";
  }

  /** The kB of {@code m}'s group {@code group}, in MiB. */
  private static double mib(Matcher m, int group) {
    return Long.parseLong(m.group(group)) / 1024.0;
  }
}
