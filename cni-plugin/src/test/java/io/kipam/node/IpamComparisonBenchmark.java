package io.kipam.node;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * kipam next to whereabouts and next to the floor, on one control plane of its own, in one run: the
 * burst workload (200 pods over 4 nodes, ADDs at 8 and at 32 at once). kipam: the operator and 4
 * kipam-node daemons as processes, each ADD through the installed executable. whereabouts: its
 * plugin (hack/whereabouts/build.sh builds it from its Go module) called as a runtime calls an IPAM
 * plugin, with its default settings and the kubernetes datastore. The floor: the same number of
 * objects (one IPAddress each) created straight against kube-apiserver at the same concurrency. Per
 * phase: calls per second, p50/p95/p99, failures by CNI code, and API requests per allocation by
 * verb from kube-apiserver's own {@code apiserver_request_total}. Printed, never asserted. Run with
 * {@code ./mvnw -B -pl cni-plugin -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=IpamComparisonBenchmark}; docs/benchmarks.md has results.
 */
class IpamComparisonBenchmark {

  private static final int NODES = 4;
  private static final int PODS = 200;
  private static final int[] CONCURRENCY = {8, 32};

  /** Pods per node in the exact-budget workload: 62, the assignable addresses of a /26. */
  private static final int[] EXACT_SPREAD = {26, 16, 12, 8};

  private static final Pattern CODE = Pattern.compile("\"code\":\\s*(\\d+)");
  private static final Pattern REQUEST =
      Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", Pattern.MULTILINE);
  private static final Pattern VERB = Pattern.compile("(?:^|,)verb=\"([^\"]*)\"");

  /** One phase's numbers. */
  private record Phase(
      String system,
      int concurrency,
      int calls,
      int retried,
      double seconds,
      List<Double> latencies,
      List<Double> finishedAt,
      Map<String, Integer> failures,
      Map<String, Double> requestsByVerb) {}

  @Test
  void burst() throws Exception {
    Path whereabouts = whereaboutsDir();
    List<Phase> phases = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    try (ControlPlane controlPlane = ControlPlane.fresh();
        KipamProcesses processes =
            new KipamProcesses(controlPlane, controlPlane.client(), "compare")) {
      KubernetesClient client = controlPlane.client();
      KipamCrds.install(client);
      installCrds(client, whereabouts.resolve("crds"));
      OperatorProcess operator = processes.leadingOperator(Map.of(), Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("compare");
      Cluster.poolReadiedByOperator(client, pool, Cluster.spec("10.216.0.0/16", 26, 0));
      List<NodeRig> rigs = new ArrayList<>();
      for (int n = 0; n < NODES; n++) {
        rigs.add(processes.node(pool, Map.of("KIPAM_BLOCK_STATUS_SECONDS", "5")));
      }
      // whereabouts reads its settings from a file of its own, as its DaemonSet installs one;
      // without it every call fails with "config file not found".
      Path wbSettings = processes.dir.resolve("whereabouts.conf");
      Files.writeString(
          wbSettings,
          "{\"datastore\":\"kubernetes\",\"log_level\":\"error\",\"kubernetes\":"
              + "{\"kubeconfig\":\""
              + controlPlane.adminKubeconfig()
              + "\"}}");
      String wbConfig =
          "{\"cniVersion\":\"1.0.0\",\"name\":\"compare-whereabouts\",\"type\":\"whereabouts\","
              + "\"ipam\":{\"type\":\"whereabouts\",\"range\":\"10.217.0.0/16\","
              + "\"configuration_path\":\""
              + wbSettings
              + "\"}}";

      // A warm-up round of each, unmeasured: kipam's JVMs compile their hot paths, whereabouts'
      // pool and lease objects exist, kube-apiserver has seen every kind of request.
      List<Pod> warmUp = pods(client, processes, rigs, "w");
      IntFunction<Call> kipamWarm =
          i -> {
            NodeRig rig = rigs.get(i % NODES);
            return new Call(
                rig.kipam,
                env("ADD", "kipam-w" + i, warmUp.get(i), rig.node),
                Cluster.config("1.1.0", rig.daemon.socket.toString(), pool));
          };
      cni(client, "kipam", 8, warmUp, kipamWarm);
      cni(client, "kipam", 8, warmUp, kipamWarm);
      cni(
          client,
          "whereabouts",
          8,
          warmUp,
          i ->
              new Call(
                  whereabouts.resolve("whereabouts"),
                  env("ADD", "wb-w" + i, warmUp.get(i), rigs.get(i % NODES).node),
                  wbConfig));
      floor(client, 8, warmUp);

      int round = 0;
      for (int concurrency : CONCURRENCY) {
        round++;
        List<Pod> pods = pods(client, processes, rigs, "r" + round);
        List<Long> pids = new ArrayList<>(List.of(operator.pid()));
        rigs.forEach(r -> pids.add(r.daemon.pid()));
        double cpuBefore = cpuSeconds(pids);
        double daemonBefore = daemonAddSeconds(rigs);
        Phase kipam =
            cni(
                client,
                "kipam",
                concurrency,
                pods,
                i -> {
                  NodeRig rig = rigs.get(i % NODES);
                  return new Call(
                      rig.kipam,
                      env("ADD", "kipam-" + i + "-" + concurrency, pods.get(i), rig.node),
                      Cluster.config("1.1.0", rig.daemon.socket.toString(), pool));
                });
        phases.add(kipam);
        double daemonMean = (daemonAddSeconds(rigs) - daemonBefore) / PODS * 1000;
        double callerMean = kipam.latencies().stream().mapToDouble(d -> d).average().orElse(0);
        notes.add(
            String.format(
                "kipam at %d: mean ADD %.1f ms = daemon %.1f ms + executable, socket and waiting"
                    + " %.1f ms; CPU of kipam's processes (operator, %d daemons, ADDs and DELs)"
                    + " %.1f s; peak RSS %s",
                concurrency,
                callerMean,
                daemonMean,
                callerMean - daemonMean,
                NODES,
                cpuSeconds(pids) - cpuBefore,
                peakRss(pids)));
        phases.add(
            cni(
                client,
                "whereabouts",
                concurrency,
                pods,
                i ->
                    new Call(
                        whereabouts.resolve("whereabouts"),
                        env(
                            "ADD",
                            "wb-" + i + "-" + concurrency,
                            pods.get(i),
                            rigs.get(i % NODES).node),
                        wbConfig)));
        phases.add(floor(client, concurrency, pods));
      }

      // Exact budget: as many assignable addresses as pods (a /26 without its network and
      // broadcast: 62), spread unevenly over the nodes, 8 at once; an ADD that finds no address
      // is retried as a runtime retries, for up to 60 s.
      String exact = Fixtures.uniqueName("exact");
      Cluster.poolReadiedByOperator(client, exact, Cluster.spec("10.219.0.0/26", 28, 0));
      List<Pod> budget = new ArrayList<>();
      Map<String, NodeRig> byNode = new java.util.HashMap<>();
      for (int n = 0; n < NODES; n++) {
        byNode.put(rigs.get(n).node, rigs.get(n));
        for (int k = 0; k < EXACT_SPREAD[n]; k++) {
          budget.add(
              Cluster.pod(
                  client,
                  processes.namespaces.get(budget.size() % 3),
                  "exact-" + n + "-" + k,
                  rigs.get(n).node));
        }
      }
      // Interleave the nodes' pods, as pods of several Deployments arrive.
      Collections.shuffle(budget, new java.util.Random(1));
      phases.add(
          cni(
              client,
              "kipam exact",
              8,
              budget,
              i -> {
                NodeRig rig = byNode.get(budget.get(i).getSpec().getNodeName());
                return new Call(
                    rig.kipam,
                    env("ADD", "kipam-exact-" + i, budget.get(i), rig.node),
                    Cluster.config("1.1.0", rig.daemon.socket.toString(), exact));
              },
              Duration.ofSeconds(60)));
      String wbExact = wbConfig.replace("10.217.0.0/16", "10.220.0.0/26");
      phases.add(
          cni(
              client,
              "wb exact",
              8,
              budget,
              i ->
                  new Call(
                      whereabouts.resolve("whereabouts"),
                      env(
                          "ADD",
                          "wb-exact-" + i,
                          budget.get(i),
                          budget.get(i).getSpec().getNodeName()),
                      wbExact),
              Duration.ofSeconds(60)));
    }
    String report = print(phases) + String.join("\n", notes) + "\n";
    System.out.print(report);
    BenchmarkCharts.write(
        Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report")),
        "ipam-comparison",
        report,
        phases.stream()
            .filter(p -> !p.system().contains("exact"))
            .map(
                p ->
                    new BenchmarkCharts.Series(
                        p.system() + " at " + p.concurrency(), p.latencies(), p.finishedAt()))
            .toList());
  }

  /** The daemons' own time on ADDs so far (kipam_cni_call_duration_seconds), in seconds. */
  private static double daemonAddSeconds(List<NodeRig> rigs) throws Exception {
    double sum = 0;
    for (NodeRig rig : rigs) {
      sum += DaemonMetrics.addSeconds(rig.daemon.socket)[0];
    }
    return sum;
  }

  /** User and system CPU seconds the processes used so far (/proc, 100 ticks a second). */
  private static double cpuSeconds(List<Long> pids) throws Exception {
    double ticks = 0;
    for (long pid : pids) {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }
    return ticks / 100;
  }

  /** Each process's peak resident memory (VmHWM), in MiB. */
  private static String peakRss(List<Long> pids) throws Exception {
    List<String> peaks = new ArrayList<>();
    for (long pid : pids) {
      Matcher m =
          Pattern.compile("VmHWM:\\s+(\\d+) kB")
              .matcher(Files.readString(Path.of("/proc", String.valueOf(pid), "status")));
      peaks.add(m.find() ? Long.parseLong(m.group(1)) / 1024 + " MiB" : "?");
    }
    return "operator "
        + peaks.get(0)
        + ", daemons "
        + String.join(", ", peaks.subList(1, peaks.size()));
  }

  /** 200 pods over the nodes (bound to them) and three namespaces, created before timing. */
  private static List<Pod> pods(
      KubernetesClient client, KipamProcesses processes, List<NodeRig> rigs, String round) {
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < PODS; i++) {
      pods.add(
          Cluster.pod(
              client,
              processes.namespaces.get(i % 3),
              "p-" + round + "-" + i,
              rigs.get(i % NODES).node));
    }
    return pods;
  }

  private record Call(Path executable, Map<String, String> env, String config) {}

  private static Map<String, String> env(String command, String containerId, Pod pod, String node) {
    Map<String, String> env =
        CniCall.env(
            command,
            containerId,
            "eth0",
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            pod.getMetadata().getUid());
    env.put("NODENAME", node); // whereabouts' node, for its node-slice mode
    return env;
  }

  /** An ADD per pod, {@code concurrency} at once, timed one by one, then their DELs. */
  private static Phase cni(
      KubernetesClient client,
      String system,
      int concurrency,
      List<Pod> pods,
      IntFunction<Call> call)
      throws Exception {
    return cni(client, system, concurrency, pods, call, Duration.ZERO);
  }

  /**
   * As above, an ADD that fails with code 100 (no address) or 11 (try again later) tried again
   * every 300 ms for up to {@code retry}, as a runtime retries a sandbox; its latency is the time
   * until its last answer.
   */
  private static Phase cni(
      KubernetesClient client,
      String system,
      int concurrency,
      List<Pod> pods,
      IntFunction<Call> call,
      Duration retry)
      throws Exception {
    AtomicInteger retried = new AtomicInteger();
    Map<String, Double> before = requests(client);
    List<Double> latencies = Collections.synchronizedList(new ArrayList<>());
    List<Double> finishedAt = Collections.synchronizedList(new ArrayList<>());
    Map<String, Integer> failures = Collections.synchronizedMap(new TreeMap<>());
    long phaseStart = System.nanoTime();
    double seconds =
        run(
            concurrency,
            pods.size(),
            i -> {
              Call c = call.apply(i);
              long start = System.nanoTime();
              CniCall.Outcome outcome = CniCall.run(c.executable(), c.env(), c.config());
              if (outcome.exit() != 0 && retry.compareTo(Duration.ZERO) > 0) {
                retried.incrementAndGet();
                while (outcome.exit() != 0
                    && outcome.stdout().matches("(?s).*\"code\":\\s*(100|11)\\b.*")
                    && System.nanoTime() - start < retry.toNanos()) {
                  Thread.sleep(300);
                  outcome = CniCall.run(c.executable(), c.env(), c.config());
                }
              }
              long end = System.nanoTime();
              latencies.add((end - start) / 1e6);
              finishedAt.add((end - phaseStart) / 1e9);
              if (outcome.exit() != 0) {
                Matcher m = CODE.matcher(outcome.stdout());
                String kind = m.find() ? "code " + m.group(1) : "exit " + outcome.exit();
                if (failures.merge(kind, 1, Integer::sum) == 1) {
                  System.out.printf(
                      "%s: first failure with %s: %s%n",
                      system, kind, outcome.stdout().replaceAll("[^\\x20-\\x7e]", "?"));
                }
              }
            });
    Map<String, Double> perAllocation = perAllocation(before, requests(client), pods.size());
    run(
        concurrency,
        pods.size(),
        i -> {
          Call c = call.apply(i);
          Map<String, String> del = new java.util.HashMap<>(c.env());
          del.put("CNI_COMMAND", "DEL");
          CniCall.run(c.executable(), del, c.config());
        });
    return new Phase(
        system,
        concurrency,
        pods.size(),
        retried.get(),
        seconds,
        latencies,
        finishedAt,
        failures,
        perAllocation);
  }

  /** The floor: one IPAddress created per pod straight against kube-apiserver, then deleted. */
  private static Phase floor(KubernetesClient client, int concurrency, List<Pod> pods)
      throws Exception {
    Map<String, Double> before = requests(client);
    List<Double> latencies = Collections.synchronizedList(new ArrayList<>());
    List<Double> finishedAt = Collections.synchronizedList(new ArrayList<>());
    Map<String, Integer> failures = Collections.synchronizedMap(new TreeMap<>());
    long phaseStart = System.nanoTime();
    String pool = "floor-" + concurrency + "-" + pods.get(0).getMetadata().getName();
    double seconds =
        run(
            concurrency,
            pods.size(),
            i -> {
              long start = System.nanoTime();
              try {
                client.resource(address(pods.get(i), pool, i)).create();
              } catch (RuntimeException e) {
                if (failures.merge(e.getClass().getSimpleName(), 1, Integer::sum) == 1) {
                  System.out.printf("floor: first failure: %s%n", e.getMessage());
                }
              }
              long end = System.nanoTime();
              latencies.add((end - start) / 1e6);
              finishedAt.add((end - phaseStart) / 1e9);
            });
    Map<String, Double> perAllocation = perAllocation(before, requests(client), pods.size());
    for (String namespace :
        pods.stream().map(p -> p.getMetadata().getNamespace()).distinct().toList()) {
      client.resources(IPAddress.class).inNamespace(namespace).withLabel("floor", pool).delete();
    }
    return new Phase(
        "floor",
        concurrency,
        pods.size(),
        0,
        seconds,
        latencies,
        finishedAt,
        failures,
        perAllocation);
  }

  private static IPAddress address(Pod pod, String pool, int i) {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withName(pool + "." + i)
            .withNamespace(pod.getMetadata().getNamespace())
            .withLabels(Map.of("floor", pool))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp("10.218." + (i / 250) + "." + (i % 250 + 1));
    spec.setPool(pool);
    spec.setNetwork("floor");
    spec.setBlock(pool + ".10-218-0-0-16");
    spec.setNode(pod.getSpec().getNodeName());
    spec.setPod(new PodReference(pod.getMetadata().getName(), pod.getMetadata().getUid()));
    spec.setContainerID("floor-" + i);
    spec.setInterfaceName("eth0");
    address.setSpec(spec);
    return address;
  }

  /** Runs {@code task} for 0..count-1 with {@code concurrency} workers; the seconds it took. */
  private static double run(int concurrency, int count, IntConsumerWithExceptions task)
      throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(concurrency);
    AtomicInteger next = new AtomicInteger();
    long start = System.nanoTime();
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < concurrency; w++) {
      done.add(
          workers.submit(
              () -> {
                for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                  task.accept(i);
                }
                return null;
              }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    workers.shutdown();
    return (System.nanoTime() - start) / 1e9;
  }

  @FunctionalInterface
  private interface IntConsumerWithExceptions {
    void accept(int i) throws Exception;
  }

  /** kube-apiserver's request counts now, by verb, every group and resource. */
  private static Map<String, Double> requests(KubernetesClient client) {
    Map<String, Double> byVerb = new TreeMap<>();
    Matcher m = REQUEST.matcher(client.raw("/metrics"));
    while (m.find()) {
      Matcher verb = VERB.matcher(m.group(1));
      if (verb.find() && !verb.group(1).equals("WATCH") && !verb.group(1).equals("CONNECT")) {
        byVerb.merge(verb.group(1), Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return byVerb;
  }

  private static Map<String, Double> perAllocation(
      Map<String, Double> before, Map<String, Double> after, int allocations) {
    Map<String, Double> delta = new TreeMap<>();
    after.forEach(
        (verb, n) -> {
          double d = n - before.getOrDefault(verb, 0.0);
          if (d > 0) {
            delta.put(verb, d / allocations);
          }
        });
    return delta;
  }

  private static void installCrds(KubernetesClient client, Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : files.sorted().toList()) {
        try (InputStream in = Files.newInputStream(file)) {
          CustomResourceDefinition crd =
              client.apiextensions().v1().customResourceDefinitions().load(in).item();
          client.resource(crd).forceConflicts().serverSideApply();
          Fixtures.awaitEstablished(client, crd.getMetadata().getName());
        }
      }
    }
  }

  private static Path whereaboutsDir() {
    Exec.Result built =
        Exec.run(
                List.of(
                    "bash",
                    ControlPlaneBinaries.repositoryRoot()
                        .resolve("hack/whereabouts/build.sh")
                        .toString()),
                Map.of(),
                "")
            .orFail();
    return Path.of(built.stdout().trim().lines().reduce((a, b) -> b).orElseThrow());
  }

  /** The report: the table, and kipam against the floor and whereabouts. */
  private static String print(List<Phase> phases) {
    StringBuilder out = new StringBuilder();
    java.util.Formatter f = new java.util.Formatter(out);
    f.format(
        "%nburst: %d pods over %d nodes (ADDs; DELs afterwards, unmeasured); exact: 62 pods"
            + " 26/16/12/8 over %d nodes, a pool of 62 addresses, retried up to 60 s%n",
        PODS, NODES, NODES);
    f.format(
        "%-12s %4s %9s %9s %9s %9s %7s %7s  %-28s %s%n",
        "system",
        "at",
        "calls/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "retried",
        "failed",
        "API requests per allocation",
        "");
    for (Phase p : phases) {
      StringBuilder verbs = new StringBuilder();
      p.requestsByVerb().forEach((verb, n) -> verbs.append(String.format("%s %.2f ", verb, n)));
      int failed = p.failures().values().stream().mapToInt(Integer::intValue).sum();
      f.format(
          "%-12s %4d %9.1f %9.1f %9.1f %9.1f %7d %7d  %s%s%n",
          p.system(),
          p.concurrency(),
          p.calls() / p.seconds(),
          percentile(p.latencies(), 50),
          percentile(p.latencies(), 95),
          percentile(p.latencies(), 99),
          p.retried(),
          failed,
          verbs,
          p.failures().isEmpty() ? "" : p.failures().toString());
    }
    for (int concurrency : CONCURRENCY) {
      double kipam = rate(phases, "kipam", concurrency);
      double wb = rate(phases, "whereabouts", concurrency);
      double floor = rate(phases, "floor", concurrency);
      f.format(
          "at %d: kipam %.0f%% of the floor, %.1fx whereabouts; kipam p99 / whereabouts p99 = %.3f%n",
          concurrency,
          100 * kipam / floor,
          kipam / wb,
          p99(phases, "kipam", concurrency) / p99(phases, "whereabouts", concurrency));
    }
    return out.toString();
  }

  private static double rate(List<Phase> phases, String system, int concurrency) {
    return phases.stream()
        .filter(p -> p.system().equals(system) && p.concurrency() == concurrency)
        .mapToDouble(p -> p.calls() / p.seconds())
        .findFirst()
        .orElse(Double.NaN);
  }

  private static double p99(List<Phase> phases, String system, int concurrency) {
    return phases.stream()
        .filter(p -> p.system().equals(system) && p.concurrency() == concurrency)
        .mapToDouble(p -> percentile(p.latencies(), 99))
        .findFirst()
        .orElse(Double.NaN);
  }

  private static double percentile(List<Double> values, int p) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }
}
