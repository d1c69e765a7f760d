package io.kipam.system.bench;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.bench.ComparisonReport.Phase;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonMetrics;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.system.harness.Whereabouts;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.KipamCrds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * kipam next to whereabouts (default settings and node-slice mode) and next to the floor, on one
 * control plane of its own, in one run. kipam: the operator and 4 kipam-node daemons as processes,
 * each ADD through the installed executable. whereabouts: its plugin (built from its Go module by
 * hack/whereabouts/build.sh) called as a runtime calls an IPAM plugin, its node-slice controller as
 * a process. The floor: the objects kipam writes per allocation, created straight against
 * kube-apiserver at the same concurrency. Workloads: burst (200 pods at 8 and at 32 at once),
 * dual-stack burst, churn (ADD+DEL at a fixed rate for 60 s), exact budget (62 pods, 62 addresses).
 * Per phase: calls per second, p50/p95/p99, failures by CNI code, API requests per allocation by
 * verb (kube-apiserver's own {@code apiserver_request_total}) and where the CPU went. Printed and
 * written with charts to {@code kipam.reportDir}, never asserted; docs/benchmarks.md has the
 * command and results.
 */
public class IpamComparisonBenchmark {

  private static final int NODES = 4;
  private static final int PODS = 200;
  private static final int[] CONCURRENCY = {8, 32};

  /** Pods per node in the exact-budget workload: 62, the assignable addresses of a /26. */
  private static final int[] EXACT_SPREAD = {26, 16, 12, 8};

  /** Churn: ADDs (each after the DEL of its slot's previous pod) per second, for how long. */
  private static final int CHURN_RATE = 20;

  private static final Duration CHURN_TIME = Duration.ofSeconds(60);
  private static final int CHURN_SLOTS = 64;
  private static final int CHURN_IN_FLIGHT = 32;
  private static final Workloads.Churn CHURN =
      new Workloads.Churn(CHURN_RATE, CHURN_TIME, CHURN_IN_FLIGHT);

  private static final String WB_NAMESPACE = "kube-system";

  @Test
  public void compare() throws Exception {
    Path whereabouts = Whereabouts.build();
    ComparisonReport report = new ComparisonReport();
    Process sliceController = null;
    try (ControlPlane controlPlane = ControlPlane.fresh();
        KipamProcesses processes =
            new KipamProcesses(controlPlane, controlPlane.client(), "compare")) {
      KubernetesClient client = controlPlane.client();
      KipamCrds.install(client);
      Whereabouts.installCrds(client, whereabouts.resolve("crds"));
      OperatorProcess operator = processes.leadingOperator(Map.of(), Duration.ofSeconds(60));
      String pool = Workloads.readyPool(client, "compare", "10.216.0.0/16", 26);
      String pool6 = Workloads.readyPool(client, "compare6", "fd00:216::/112", 122);
      String exactPool = Workloads.readyPool(client, "exact", "10.219.0.0/26", 28);
      List<NodeRig> rigs = Workloads.daemons(processes, pool, NODES);
      Map<String, NodeRig> byNode = new HashMap<>();
      rigs.forEach(r -> byNode.put(r.node, r));

      Path wbSettings =
          Whereabouts.writeSettings(
              processes.dir.resolve("whereabouts.conf"), controlPlane.adminKubeconfig());
      sliceController = startSliceController(whereabouts, controlPlane, processes.dir);
      String sliceConfig = nodeSlices(client, wbSettings, rigs);

      List<Long> kipamPids = new ArrayList<>(List.of(operator.pid()));
      rigs.forEach(r -> kipamPids.add(r.daemon.pid()));
      Map<String, List<Long>> groups = new LinkedHashMap<>();
      groups.put("kipam-operator", kipamPids.subList(0, 1));
      groups.put("kipam-node daemons", kipamPids.subList(1, kipamPids.size()));
      controlPlane.pids().forEach((name, pid) -> groups.put(name, List.of(pid)));
      groups.put("whereabouts controller", List.of(sliceController.pid()));
      ProcessCpu cpu = new ProcessCpu(groups);
      Workloads warm = new Workloads(client, cpu, new ComparisonReport());
      Workloads run = new Workloads(client, cpu, report);

      ComparedIpam kipam = Workloads.kipam("kipam", byNode, pool);
      ComparedIpam wb =
          whereabouts("whereabouts", whereabouts, wbConfig(wbSettings, "10.217.0.0/16"));
      ComparedIpam slices = whereabouts("wb-slices", whereabouts, sliceConfig);
      ComparedIpam floor = new ComparedIpam.Floor(client, List.of("4"));

      // Cold: kipam's daemons' first ADDs, before any warm-up (since their start they have only
      // listed and watched), as a new node's pending
      // pods meet them; compared with the same burst warm below.
      Phase cold =
          run.burst(
              "cold", kipam, 8, Workloads.pods(client, processes, rigs, "k", PODS), Duration.ZERO);

      // Warm-up rounds, unmeasured: kipam's JVMs compile their hot paths (five rounds, 250 ADDs
      // and DELs per daemon: a node's daemon runs for days), whereabouts' pool and lease objects
      // exist, kube-apiserver has seen every kind of request.
      List<Pod> warmUp = Workloads.pods(client, processes, rigs, "w", PODS);
      for (ComparedIpam ipam : List.of(kipam, kipam, kipam, kipam, kipam, wb, slices, floor)) {
        warm.burst("warm-up", ipam, 8, warmUp, Duration.ZERO);
      }

      report.versionLatency(versionP50(rigs.get(0)));
      int round = 0;
      for (int concurrency : CONCURRENCY) {
        List<Pod> pods = Workloads.pods(client, processes, rigs, "r" + ++round, PODS);
        double daemonBefore = daemonAddSeconds(rigs);
        Phase k = run.burst("burst", kipam, concurrency, pods, Duration.ZERO);
        double daemonMean = (daemonAddSeconds(rigs) - daemonBefore) / PODS * 1000;
        double callerMean = k.latencies().stream().mapToDouble(d -> d).average().orElse(0);
        report.note(
            String.format(
                "kipam at %d: mean ADD %.1f ms = daemon %.1f ms + executable, socket and waiting"
                    + " %.1f ms",
                concurrency, callerMean, daemonMean, callerMean - daemonMean));
        if (concurrency == cold.concurrency()) {
          report.note(
              String.format(
                  "kipam cold at %d (the daemons' first ADDs): %.1f ADDs/s, %d pods in %.1f s;"
                      + " warm %.1f ADDs/s, %.1f s: cold at %.0f%% of warm",
                  concurrency,
                  cold.rate(),
                  PODS,
                  cold.seconds(),
                  k.rate(),
                  k.seconds(),
                  100 * cold.rate() / k.rate()));
        }
        for (ComparedIpam ipam : List.of(wb, slices, floor)) {
          run.burst("burst", ipam, concurrency, pods, Duration.ZERO);
        }
      }

      // Dual-stack: one IPv4 and one IPv6 address per pod. whereabouts' node slices take one
      // range only, so they sit this one out.
      List<Pod> dual = Workloads.pods(client, processes, rigs, "d", PODS);
      run.burst("dual", Workloads.kipam("kipam", byNode, pool, pool6), 8, dual, Duration.ZERO);
      run.burst(
          "dual",
          whereabouts(
              "whereabouts",
              whereabouts,
              wbConfig(wbSettings, "10.222.0.0/16")
                  .replace(
                      "\"range\":\"10.222.0.0/16\"",
                      "\"ipRanges\":[{\"range\":\"10.222.0.0/16\"},{\"range\":\"fd00:222::/112\"}]")),
          8,
          dual,
          Duration.ZERO);
      run.burst("dual", new ComparedIpam.Floor(client, List.of("4", "6")), 8, dual, Duration.ZERO);

      // Churn: pods come and go at a fixed rate, as Jobs and rolling updates make them.
      List<Pod> churn = Workloads.pods(client, processes, rigs, "c", CHURN_SLOTS);
      for (ComparedIpam ipam : List.of(kipam, wb, slices, floor)) {
        run.churn(ipam, churn, CHURN);
      }

      // Exact budget: as many assignable addresses as pods (a /26 without its network and
      // broadcast: 62), spread unevenly over the nodes and interleaved, 8 at once; an ADD that
      // finds no address is retried as a runtime retries, for up to 60 s. Node slices cannot
      // serve an uneven spread from equal slices of a /26, so they sit this one out.
      List<Pod> budget = new ArrayList<>();
      for (int n = 0; n < NODES; n++) {
        for (int i = 0; i < EXACT_SPREAD[n]; i++) {
          budget.add(
              Cluster.pod(
                  client,
                  processes.namespaces.get(budget.size() % 3),
                  "exact-" + n + "-" + i,
                  rigs.get(n).node));
        }
      }
      Collections.shuffle(budget, new Random(1));
      Duration retry = Duration.ofSeconds(60);
      run.burst("exact", Workloads.kipam("kipam", byNode, exactPool), 8, budget, retry);
      run.burst(
          "exact",
          whereabouts("whereabouts", whereabouts, wbConfig(wbSettings, "10.220.0.0/26")),
          8,
          budget,
          retry);

      List<String> rss = ProcessCpu.peakRss(kipamPids);
      report.note(
          "peak RSS over the run: kipam-operator "
              + rss.get(0)
              + ", kipam-node daemons "
              + String.join(", ", rss.subList(1, rss.size())));
      String text = report.print(header(whereabouts), CONCURRENCY);
      System.out.print(text);
      BenchmarkCharts.write(
          Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report")),
          "ipam-comparison",
          text,
          report.phases().stream()
              .filter(p -> p.workload().equals("burst"))
              .map(
                  p ->
                      new BenchmarkCharts.Series(
                          p.system() + " at " + p.concurrency(), p.latencies(), p.finishedAt()))
              .toList());
    } finally {
      if (sliceController != null) {
        sliceController.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** The machine, the versions and the workloads, first in the report. */
  private static String header(Path whereabouts) throws Exception {
    Matcher mem =
        Pattern.compile("MemTotal:\\s+(\\d+) kB")
            .matcher(Files.readString(Path.of("/proc/meminfo")));
    return String.format(
        "kipam, whereabouts and the floor on one control plane, %s%n"
            + "machine: %d cores, %d GiB; Java %s; Kubernetes %s; whereabouts %s%n"
            + "burst: %d pods over %d nodes, ADDs at %s at once (DELs afterwards, unmeasured);"
            + " cold: kipam alone, the same at 8 before any warm-up (the daemons' first ADDs);%n"
            + "dual: the same with an IPv4 and an IPv6 address per pod, 8 at once;%n"
            + "churn: %d ADDs/s, each after the DEL of its slot's previous pod (%d slots, at most %d"
            + " calls in flight) for %d s; exact: 62 pods 26/16/12/8 over %d nodes, a pool of 62"
            + " addresses, retried up to 60 s%n",
        LocalDate.now(),
        Runtime.getRuntime().availableProcessors(),
        mem.find() ? Math.round(Long.parseLong(mem.group(1)) / 1024.0 / 1024.0) : 0,
        System.getProperty("java.version"),
        ControlPlaneBinaries.directory().getFileName().toString().replace("-linux-amd64", ""),
        whereabouts.getFileName(),
        PODS,
        NODES,
        java.util.Arrays.toString(CONCURRENCY),
        CHURN_RATE,
        CHURN_SLOTS,
        CHURN_IN_FLIGHT,
        CHURN_TIME.toSeconds(),
        NODES);
  }

  private static ComparedIpam whereabouts(String name, Path dir, String config) {
    return new ComparedIpam.Cni(name, pod -> dir.resolve("whereabouts"), pod -> config);
  }

  /** whereabouts' network configuration with its default settings: a range, its settings file. */
  private static String wbConfig(Path settings, String range) {
    return "{\"cniVersion\":\"1.0.0\",\"name\":\"compare-whereabouts\",\"type\":\"whereabouts\","
        + "\"ipam\":{\"type\":\"whereabouts\",\"range\":\""
        + range
        + "\",\"configuration_path\":\""
        + settings
        + "\"}}";
  }

  /** whereabouts' node-slice controller, as its Deployment runs it, in whereabouts' namespace. */
  private static Process startSliceController(Path dir, ControlPlane controlPlane, Path workDir)
      throws Exception {
    ProcessBuilder builder =
        new ProcessBuilder(
                dir.resolve("whereabouts-nodeslice").toString(),
                "--kubeconfig",
                controlPlane.adminKubeconfig().toString())
            .redirectErrorStream(true)
            .redirectOutput(workDir.resolve("whereabouts-nodeslice.log").toFile());
    builder.environment().put("WHEREABOUTS_NAMESPACE", WB_NAMESPACE);
    return builder.start();
  }

  /**
   * A NetworkAttachmentDefinition in node-slice mode (a /16 in /22 slices, one per node), as its
   * README shows; waits until the controller gave every node its slice. Returns the plugin's
   * network configuration, the same as the definition's.
   */
  private static String nodeSlices(KubernetesClient client, Path settings, List<NodeRig> rigs) {
    String name = "wb-slices";
    String config =
        "{\"cniVersion\":\"1.0.0\",\"name\":\""
            + name
            + "\",\"type\":\"macvlan\",\"ipam\":{\"type\":\"whereabouts\","
            + "\"range\":\"10.221.0.0/16\",\"node_slice_size\":\"/22\",\"configuration_path\":\""
            + settings
            + "\"}}";
    Whereabouts.createNad(client, WB_NAMESPACE, name, config);
    Awaitility.await("whereabouts' node-slice controller gives each node a slice")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> slicedNodes(client, name).containsAll(rigs.stream().map(r -> r.node).toList()));
    return config;
  }

  @SuppressWarnings("unchecked")
  private static List<String> slicedNodes(KubernetesClient client, String name) {
    GenericKubernetesResource pool =
        client
            .genericKubernetesResources("whereabouts.cni.cncf.io/v1alpha1", "NodeSlicePool")
            .inNamespace(WB_NAMESPACE)
            .withName(name)
            .get();
    if (pool == null || !(pool.getAdditionalProperties().get("status") instanceof Map<?, ?> s)) {
      return List.of();
    }
    Object allocations = ((Map<String, Object>) s).get("allocations");
    if (!(allocations instanceof List<?> list)) {
      return List.of();
    }
    return list.stream()
        .map(a -> String.valueOf(((Map<String, Object>) a).get("nodeName")))
        .toList();
  }

  /** The median of 200 VERSION calls of the installed executable, in milliseconds. */
  private static double versionP50(NodeRig rig) {
    List<Double> times = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      long start = System.nanoTime();
      CniCall.run(rig.kipam, Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"1.1.0\"}");
      times.add((System.nanoTime() - start) / 1e6);
    }
    Collections.sort(times);
    return times.get(times.size() / 2);
  }

  /** The daemons' own time on ADDs so far (kipam_cni_call_duration_seconds), in seconds. */
  private static double daemonAddSeconds(List<NodeRig> rigs) throws Exception {
    double sum = 0;
    for (NodeRig rig : rigs) {
      sum += DaemonMetrics.addSeconds(rig.daemon.socket)[0];
    }
    return sum;
  }
}
