package io.kipam.system.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.bench.ComparedIpam.Attempt;
import io.kipam.system.bench.ComparisonReport.Phase;
import io.kipam.system.harness.ApiRequestCounts;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The workloads of the comparison benchmarks, each measured the same way whatever the system: the
 * caller's latencies and calls per second, kube-apiserver's own request counts and the CPU of each
 * process group around the phase, added to {@code report}.
 */
record Workloads(KubernetesClient client, ProcessCpu cpu, ComparisonReport report) {

  /**
   * The churn workload's shape: {@code rate} ADDs a second for {@code time}, each after the DEL of
   * what its pod slot held before, at most {@code inFlight} calls at once.
   */
  record Churn(int rate, Duration time, int inFlight) {}

  /**
   * An ADD per pod, {@code concurrency} at once, timed one by one, then their DELs (untimed). With
   * a {@code retry} time, an ADD that fails with code 100 (no address) or 11 (try again later) is
   * tried again every 300 ms, as a runtime retries a sandbox; its latency is the time until its
   * last answer.
   */
  Phase burst(String workload, ComparedIpam ipam, int concurrency, List<Pod> pods, Duration retry)
      throws Exception {
    String round = workload.charAt(0) + "" + concurrency + "-" + ipam.name() + "-";
    Measure m = new Measure(this);
    double seconds =
        run(
            concurrency,
            pods.size(),
            i -> {
              long start = System.nanoTime();
              Attempt attempt = ipam.add(pods.get(i), round + i);
              boolean retriedThis = false;
              while (!attempt.ok()
                  && attempt.retryable()
                  && System.nanoTime() - start < retry.toNanos()) {
                retriedThis = true;
                Thread.sleep(300);
                attempt = ipam.add(pods.get(i), round + i);
              }
              m.record(ipam, start, attempt, retriedThis);
            });
    Phase phase = m.phase(workload, ipam, concurrency, pods.size(), seconds);
    report.add(phase);
    run(concurrency, pods.size(), i -> ipam.del(pods.get(i), round + i));
    return phase;
  }

  /**
   * ADDs at a fixed rate for {@code churn.time()}, each in one of {@code slots.size()} pod slots
   * after the DEL of the attachment that slot held before; at most {@code churn.inFlight()} at
   * once, so a system that cannot keep up falls behind the schedule (its calls per second say by
   * how much) rather than piling up calls without end. Only the ADDs are timed.
   */
  Phase churn(ComparedIpam ipam, List<Pod> slots, Churn churn) throws Exception {
    Measure m = new Measure(this);
    String[] held = new String[slots.size()];
    Semaphore inFlight = new Semaphore(churn.inFlight());
    ExecutorService workers = Executors.newFixedThreadPool(churn.inFlight());
    List<Future<?>> done = new ArrayList<>();
    long periodNanos = 1_000_000_000L / churn.rate();
    long start = System.nanoTime();
    int issued = 0;
    while (System.nanoTime() - start < churn.time().toNanos()) {
      long due = start + issued * periodNanos;
      long wait = due - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      inFlight.acquire();
      int slot = issued % slots.size();
      String id = "c-" + ipam.name() + "-" + issued;
      issued++;
      done.add(
          workers.submit(
              () -> {
                try {
                  // a slot is used again only after its last DEL and ADD are done
                  synchronized (slots.get(slot)) {
                    if (held[slot] != null) {
                      ipam.del(slots.get(slot), held[slot]);
                    }
                    long t = System.nanoTime();
                    Attempt attempt = ipam.add(slots.get(slot), id);
                    m.record(ipam, t, attempt, false);
                    held[slot] = id;
                  }
                } finally {
                  inFlight.release();
                }
                return null;
              }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    workers.shutdown();
    Phase phase = m.phase("churn", ipam, churn.rate(), issued, seconds);
    report.add(phase);
    for (int s = 0; s < slots.size(); s++) {
      if (held[s] != null) {
        ipam.del(slots.get(s), held[s]);
      }
    }
    return phase;
  }

  /** What one phase saw, gathered while it runs; kube-apiserver's counts and the CPU around it. */
  private static final class Measure {
    private final Workloads workloads;
    private final ApiRequestCounts requestsBefore;
    private final ProcessCpu.Snapshot cpuBefore;
    private final long start = System.nanoTime();
    private final List<Double> latencies = Collections.synchronizedList(new ArrayList<>());
    private final List<Double> finishedAt = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Integer> failures = Collections.synchronizedMap(new TreeMap<>());
    private final AtomicInteger retried = new AtomicInteger();

    Measure(Workloads workloads) {
      this.workloads = workloads;
      this.requestsBefore = ApiRequestCounts.readAll(workloads.client());
      this.cpuBefore = workloads.cpu().snapshot();
    }

    void record(ComparedIpam ipam, long callStart, Attempt attempt, boolean retriedThis) {
      long end = System.nanoTime();
      latencies.add((end - callStart) / 1e6);
      finishedAt.add((end - start) / 1e9);
      if (retriedThis) {
        retried.incrementAndGet();
      }
      if (!attempt.ok() && failures.merge(attempt.failure(), 1, Integer::sum) == 1) {
        System.out.printf(
            "%s: first failure with %s: %s%n", ipam.name(), attempt.failure(), attempt.detail());
      }
    }

    Phase phase(String workload, ComparedIpam ipam, int concurrency, int calls, double seconds) {
      Map<String, Double> perAllocation = new TreeMap<>();
      ApiRequestCounts.readAll(workloads.client())
          .byVerbSince(requestsBefore)
          .forEach((verb, n) -> perAllocation.put(verb, n / calls));
      return new Phase(
          workload,
          ipam.name(),
          concurrency,
          calls,
          retried.get(),
          seconds,
          List.copyOf(latencies),
          List.copyOf(finishedAt),
          Map.copyOf(failures),
          perAllocation,
          workloads.cpu().since(cpuBefore, seconds));
    }
  }

  /**
   * {@code count} kipam-node daemons on nodes of their own, from {@code pool}, at the product's
   * settings but for the block status every 5 s (so that the first measured burst meets them as a
   * new node's pods do).
   */
  static List<NodeRig> daemons(KipamProcesses processes, String pool, int count) throws Exception {
    List<NodeRig> rigs = new ArrayList<>();
    for (int n = 0; n < count; n++) {
      rigs.add(processes.node(pool, Map.of("KIPAM_BLOCK_STATUS_SECONDS", "5")));
    }
    return rigs;
  }

  static String readyPool(KubernetesClient client, String prefix, String cidr, int block) {
    String name = Fixtures.uniqueName(prefix);
    Cluster.poolReadiedByOperator(client, name, Cluster.spec(cidr, block, 0));
    return name;
  }

  /** kipam through each node's installed executable, from {@code pools} (two: dual-stack). */
  static ComparedIpam kipam(String name, Map<String, NodeRig> byNode, String... pools) {
    return new ComparedIpam.Cni(
        name,
        pod -> byNode.get(pod.getSpec().getNodeName()).kipam,
        pod ->
            Cluster.config(
                "1.1.0", byNode.get(pod.getSpec().getNodeName()).daemon.socket.toString(), pools));
  }

  /** {@code count} pods over the nodes (bound to them) and three namespaces, made before timing. */
  static List<Pod> pods(
      KubernetesClient client,
      KipamProcesses processes,
      List<NodeRig> rigs,
      String round,
      int count) {
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      pods.add(
          Cluster.pod(
              client,
              processes.namespaces.get(i % 3),
              "p-" + round + "-" + i,
              rigs.get(i % rigs.size()).node));
    }
    return pods;
  }

  /** Runs {@code task} for 0..count-1 with {@code concurrency} workers; the seconds it took. */
  static double run(int concurrency, int count, IntTask task) throws Exception {
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
  interface IntTask {
    void accept(int i) throws Exception;
  }
}
