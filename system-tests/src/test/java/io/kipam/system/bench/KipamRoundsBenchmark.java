package io.kipam.system.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.bench.ComparisonReport.Phase;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.KipamCrds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Test;

/**
 * kipam's workloads of the comparison benchmark, kipam alone, several rounds in one run: the burst
 * at 8 and at 32, the dual-stack burst and a shortened churn, each round on the same warm daemons.
 * A burst of 200 ADDs lasts about a second, so one burst says little on a shared machine; the
 * median of several rounds, with its spread, is what a change is judged by. It prints every round
 * and the medians, and writes them as {@code kipam-rounds.tsv} to {@code kipam.reportDir}, each row
 * marked with {@code kipam.label}: {@code hack/bench-before-after.sh} runs it on two commits in
 * turn and sets the rows side by side. Nothing is asserted.
 */
public class KipamRoundsBenchmark {

  private static final int NODES = 4;
  private static final int PODS = 200;
  private static final int CHURN_SLOTS = 64;
  private static final Workloads.Churn CHURN = new Workloads.Churn(20, Duration.ofSeconds(20), 32);

  @Test
  public void rounds() throws Exception {
    int rounds = Integer.getInteger("kipam.rounds", 5);
    String label = System.getProperty("kipam.label", "this");
    Path reportDir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
    ComparisonReport report = new ComparisonReport();
    Map<Phase, Integer> roundOf = new LinkedHashMap<>();
    try (ControlPlane controlPlane = ControlPlane.fresh();
        KipamProcesses processes =
            new KipamProcesses(controlPlane, controlPlane.client(), "rounds")) {
      KubernetesClient client = controlPlane.client();
      KipamCrds.install(client);
      processes.leadingOperator(Map.of(), Duration.ofSeconds(60));
      String pool = Workloads.readyPool(client, "rounds", "10.216.0.0/16", 26);
      String pool6 = Workloads.readyPool(client, "rounds6", "fd00:216::/112", 122);
      List<NodeRig> rigs = Workloads.daemons(processes, pool, NODES);
      Map<String, NodeRig> byNode = new HashMap<>();
      rigs.forEach(r -> byNode.put(r.node, r));
      List<Long> daemons = rigs.stream().map(r -> r.daemon.pid()).toList();
      ProcessCpu cpu = new ProcessCpu(Map.of("kipam-node daemons", daemons));
      Workloads warm = new Workloads(client, cpu, new ComparisonReport());
      Workloads run = new Workloads(client, cpu, report);
      ComparedIpam kipam = Workloads.kipam("kipam", byNode, pool);
      ComparedIpam dualKipam = Workloads.kipam("kipam", byNode, pool, pool6);

      List<Pod> burst8 = Workloads.pods(client, processes, rigs, "b8", PODS);
      List<Pod> burst32 = Workloads.pods(client, processes, rigs, "b32", PODS);
      List<Pod> dual = Workloads.pods(client, processes, rigs, "d", PODS);
      List<Pod> churn = Workloads.pods(client, processes, rigs, "c", CHURN_SLOTS);
      // As in the comparison: five warm-up rounds, unmeasured, so the JVMs have compiled their
      // hot paths before the first measured round.
      for (int i = 0; i < 5; i++) {
        warm.burst("warm-up", kipam, 8, burst8, Duration.ZERO);
      }
      for (int round = 1; round <= rounds; round++) {
        roundOf.put(run.burst("burst", kipam, 8, burst8, Duration.ZERO), round);
        roundOf.put(run.burst("burst", kipam, 32, burst32, Duration.ZERO), round);
        roundOf.put(run.burst("dual", dualKipam, 8, dual, Duration.ZERO), round);
        roundOf.put(run.churn(kipam, churn, CHURN), round);
        System.out.printf("round %d of %d done%n", round, rounds);
      }
    }
    String text = print(label, rounds, roundOf);
    System.out.print(text);
    Files.createDirectories(reportDir);
    Files.writeString(reportDir.resolve("kipam-rounds.txt"), text);
    Files.writeString(reportDir.resolve("kipam-rounds.tsv"), tsv(label, roundOf));
  }

  /** Every round's row, then per workload the median of the rounds with the lowest and highest. */
  private static String print(String label, int rounds, Map<Phase, Integer> roundOf) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            "kipam alone, %d rounds on warm daemons (%s): burst 200 pods over %d nodes at 8 and"
                + " at 32, dual 200 at 8, churn %d ADDs/s for %d s; machine %d cores%n",
            rounds,
            label,
            NODES,
            CHURN.rate(),
            CHURN.time().toSeconds(),
            Runtime.getRuntime().availableProcessors()));
    out.append(
        String.format(
            "%-6s %4s %5s %9s %9s %9s %7s %11s %16s%n",
            "work",
            "at",
            "round",
            "calls/s",
            "p50 ms",
            "p99 ms",
            "failed",
            "POST/alloc",
            "daemon CPU ms/alloc"));
    roundOf.forEach(
        (p, round) ->
            out.append(
                String.format(
                    Locale.ROOT,
                    "%-6s %4d %5d %9.1f %9.1f %9.1f %7d %11.2f %16.2f%n",
                    columns(p, round))));
    out.append(
        String.format(
            "%nmedian of the rounds [lowest, highest]%n%-6s %4s %28s %28s %11s %28s%n",
            "work", "at", "calls/s", "p99 ms", "POST/alloc", "daemon CPU ms/alloc"));
    Map<String, List<Phase>> byWorkload = new LinkedHashMap<>();
    roundOf
        .keySet()
        .forEach(
            p ->
                byWorkload
                    .computeIfAbsent(p.workload() + " " + p.concurrency(), k -> new ArrayList<>())
                    .add(p));
    byWorkload.forEach(
        (key, phases) ->
            out.append(
                String.format(
                    Locale.ROOT,
                    "%-6s %4s %28s %28s %11.2f %28s%n",
                    key.split(" ")[0],
                    key.split(" ")[1],
                    spread(phases, Phase::rate),
                    spread(phases, p -> p.percentile(99)),
                    median(phases, p -> p.requestsByVerb().getOrDefault("POST", 0.0)),
                    spread(phases, KipamRoundsBenchmark::daemonCpu))));
    return out.toString();
  }

  /**
   * The CPU the kipam-node daemons spent per allocation in {@code phase}, in milliseconds: steadier
   * than calls per second on a shared machine, since another process's load slows the calls but
   * does not add to the daemons' CPU.
   */
  private static double daemonCpu(Phase phase) {
    return phase.cpu().seconds().getOrDefault("kipam-node daemons", 0.0) / phase.calls() * 1000;
  }

  private static String spread(List<Phase> phases, ToDoubleFunction<Phase> measure) {
    List<Double> values = phases.stream().map(measure::applyAsDouble).sorted().toList();
    return String.format(
        Locale.ROOT,
        "%.1f [%.1f, %.1f]",
        median(phases, measure),
        values.get(0),
        values.get(values.size() - 1));
  }

  private static double median(List<Phase> phases, ToDoubleFunction<Phase> measure) {
    List<Double> values = new ArrayList<>(phases.stream().map(measure::applyAsDouble).toList());
    Collections.sort(values);
    int n = values.size();
    return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
  }

  /**
   * label, workload, at, round, calls/s, p50 ms, p99 ms, failed, POSTs per allocation, daemon CPU
   * ms per allocation.
   */
  private static String tsv(String label, Map<Phase, Integer> roundOf) {
    StringBuilder out = new StringBuilder();
    roundOf.forEach(
        (p, round) ->
            out.append(
                label
                    + "\t"
                    + String.format(
                        Locale.ROOT,
                        "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%d\t%.3f\t%.3f%n",
                        columns(p, round))));
    return out.toString();
  }

  /**
   * A round's columns: workload, at, round, calls/s, p50 ms, p99 ms, failed, POSTs per allocation,
   * daemon CPU ms per allocation.
   */
  private static Object[] columns(Phase p, int round) {
    return new Object[] {
      p.workload(),
      p.concurrency(),
      round,
      p.rate(),
      p.percentile(50),
      p.percentile(99),
      p.failed(),
      p.requestsByVerb().getOrDefault("POST", 0.0),
      daemonCpu(p)
    };
  }
}
