package io.kipam.system.bench;

import io.kipam.system.harness.ApiRequestCounts;
import io.kipam.system.harness.ProcessCpu;
import java.util.ArrayList;
import java.util.Formatter;
import java.util.List;
import java.util.Map;

/** The comparison benchmark's phases and the report made of them: a table, ratios, CPU lines. */
public final class ComparisonReport {

  /** One system under one workload: what the caller saw, what kube-apiserver counted, the CPU. */
  public record Phase(
      String workload,
      String system,
      int concurrency,
      int calls,
      int retried,
      double seconds,
      List<Double> latencies,
      List<Double> finishedAt,
      Map<String, Integer> failures,
      Map<String, Double> requestsByVerb,
      ProcessCpu.Usage cpu) {

    public double rate() {
      return calls / seconds;
    }

    public double percentile(int p) {
      return Percentiles.of(latencies, p);
    }

    public int failed() {
      return failures.values().stream().mapToInt(Integer::intValue).sum();
    }

    public String label() {
      return workload + " " + system + " at " + concurrency;
    }
  }

  private final List<Phase> phases = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  public void add(Phase phase) {
    phases.add(phase);
  }

  public void note(String line) {
    notes.add(line);
  }

  public List<Phase> phases() {
    return List.copyOf(phases);
  }

  /** The whole report: header, table, the ratios the targets are about, notes, CPU by phase. */
  public String print(String header, int[] burstConcurrency) {
    StringBuilder out = new StringBuilder(header);
    Formatter f = new Formatter(out);
    f.format(
        "%n%-8s %-13s %4s %9s %9s %9s %9s %7s %7s  %s%n",
        "workload",
        "system",
        "at",
        "calls/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "retried",
        "failed",
        "API requests per allocation");
    for (Phase p : phases) {
      StringBuilder verbs = new StringBuilder();
      p.requestsByVerb().forEach((verb, n) -> verbs.append(String.format("%s %.2f ", verb, n)));
      f.format(
          "%-8s %-13s %4d %9.1f %9.1f %9.1f %9.1f %7d %7d  %s%s%n",
          p.workload(),
          p.system(),
          p.concurrency(),
          p.rate(),
          p.percentile(50),
          p.percentile(95),
          p.percentile(99),
          p.retried(),
          p.failed(),
          verbs,
          p.failures().isEmpty() ? "" : p.failures().toString());
    }
    out.append('\n');
    for (int at : burstConcurrency) {
      Phase kipam = find("burst", "kipam", at);
      Phase wb = find("burst", "whereabouts", at);
      Phase slices = find("burst", "wb-slices", at);
      Phase floor = find("burst", "floor", at);
      f.format(
          "burst at %d: kipam %.0f%% of the floor, %.1fx whereabouts, %.1fx whereabouts node"
              + " slices; kipam p99 / whereabouts p99 = %.3f%n",
          at,
          100 * kipam.rate() / floor.rate(),
          kipam.rate() / wb.rate(),
          kipam.rate() / slices.rate(),
          kipam.percentile(99) / wb.percentile(99));
    }
    for (int at : burstConcurrency) {
      f.format("time until every ADD of the burst at %d succeeded:", at);
      for (String system : List.of("kipam", "whereabouts", "wb-slices", "floor")) {
        Phase p = find("burst", system, at);
        f.format(" %s %.1f s", system, p.seconds());
      }
      out.append('\n');
    }
    for (int at : burstConcurrency) {
      f.format("CPU per allocation in the burst at %d (all processes, ms):", at);
      for (String system : List.of("kipam", "wb-slices", "floor")) {
        Phase p = find("burst", system, at);
        f.format(
            " %s %.1f on %.2f busy cores (%s);",
            system,
            p.cpu().seconds().values().stream().mapToDouble(d -> d).sum() * 1000 / p.calls(),
            p.cpu().busyCores(),
            perCall(p));
      }
      out.append('\n');
    }
    notes.forEach(n -> out.append(n).append('\n'));
    out.append(targets(burstConcurrency));
    out.append("\nCPU by phase (caller = the benchmark's JVM and the executables it ran):\n");
    for (Phase p : phases) {
      f.format("  %-32s %s%n", p.label(), p.cpu().describe());
    }
    return out.toString();
  }

  private double versionP50 = Double.NaN;

  public void versionLatency(double p50) {
    versionP50 = p50;
  }

  /** Each target of the comparison against this run: the number and met or missed. */
  private String targets(int[] burstConcurrency) {
    StringBuilder out = new StringBuilder("\nagainst the targets:\n");
    target(
        out,
        "executable VERSION p50 <= 5 ms",
        String.format("%.1f ms", versionP50),
        versionP50 <= 5);
    for (int at : burstConcurrency) {
      Phase kipam = find("burst", "kipam", at);
      double ofFloor = kipam.rate() / find("burst", "floor", at).rate();
      double ofWb = kipam.rate() / find("burst", "whereabouts", at).rate();
      double ofSlices = kipam.rate() / find("burst", "wb-slices", at).rate();
      double p99 = kipam.percentile(99) / find("burst", "whereabouts", at).percentile(99);
      target(
          out,
          "ADD throughput at " + at + " >= 50% of the floor",
          String.format("%.0f%%", 100 * ofFloor),
          ofFloor >= 0.5);
      target(
          out,
          "ADD throughput at " + at + " >= 20x whereabouts",
          String.format("%.1fx", ofWb),
          ofWb >= 20);
      target(
          out,
          "ADD throughput at " + at + " >= 10x whereabouts node slices",
          String.format("%.1fx", ofSlices),
          ofSlices >= 10);
      target(
          out,
          "ADD p99 at " + at + " <= 1/10 of whereabouts'",
          String.format("%.3f", p99),
          p99 <= 0.1);
    }
    Phase churn = find("churn", "kipam");
    double creates = churn.requestsByVerb().getOrDefault("POST", 0.0);
    double writes = writes(churn);
    target(
        out,
        "1.0 API write per allocation in steady state (churn)",
        String.format(
            "%.2f creates per ADD, %.2f writes per ADD and its DEL (DELETE %.2f)",
            creates, writes, churn.requestsByVerb().getOrDefault("DELETE", 0.0)),
        creates <= 1.0 && writes - churn.requestsByVerb().getOrDefault("DELETE", 0.0) <= 1.1);
    Phase exact = find("exact", "kipam", 8);
    target(
        out,
        "zero failed ADDs in the exact budget",
        exact.failed() + " of " + exact.calls() + " failed",
        exact.failed() == 0);
    return out.toString();
  }

  /** The process groups that used at least 0.5 ms per call, in ms per call. */
  private static String perCall(Phase p) {
    StringBuilder out = new StringBuilder();
    p.cpu()
        .seconds()
        .forEach(
            (group, seconds) -> {
              double ms = seconds * 1000 / p.calls();
              if (ms >= 0.5) {
                out.append(out.length() == 0 ? "" : ", ")
                    .append(String.format("%s %.1f", group, ms));
              }
            });
    return out.toString();
  }

  /** Every write verb kube-apiserver counted, per allocation. */
  public static double writes(Phase p) {
    return p.requestsByVerb().entrySet().stream()
        .filter(e -> ApiRequestCounts.isWrite(e.getKey()))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }

  private static void target(StringBuilder out, String target, String value, boolean met) {
    out.append(String.format("  %-58s %-12s %s%n", target, met ? "met" : "MISSED", value));
  }

  /** The first phase of {@code system} in {@code workload}, whatever its concurrency. */
  private Phase find(String workload, String system) {
    return phases.stream()
        .filter(p -> p.workload().equals(workload) && p.system().equals(system))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no phase " + workload + " " + system));
  }

  private Phase find(String workload, String system, int concurrency) {
    return phases.stream()
        .filter(
            p ->
                p.workload().equals(workload)
                    && p.system().equals(system)
                    && p.concurrency() == concurrency)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no phase " + workload + " " + system));
  }
}
