package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.DaemonMetrics;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.system.harness.SimulatedNodes;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.junit.jupiter.api.Test;

/**
 * A node's cost does not grow with the cluster (design §6): one real kipam-node daemon and a real
 * kipam-operator on one control plane, with 50, 500 and 5,000 simulated nodes ({@link
 * SimulatedNodes}: a Node object, one Exclusive slot, IPAddresses and coalesced slot status written
 * as kipam-node writes them) churning in the same pool. For each size it prints the watch events
 * the real daemon received per minute while the simulated nodes churned (its own metric {@code
 * kipam_node_watch_events_total}), next to the events a watch of every block of the pool — what
 * kipam-node watched before — received in the same minute, the listings the daemon made, and
 * kube-apiserver's and etcd's memory; and it draws both event rates over the number of nodes. Then,
 * at the largest size, 100 ADDs and DELs a second on the simulated nodes for 5 minutes: how far the
 * pool's {@code status.allocated} lags behind the truth (printed, and drawn).
 *
 * <p>Run with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=ScaleBenchmark}; {@code -Dkipam.scale.nodes=50,500,5000}, {@code
 * -Dkipam.scale.windowSeconds=60} and {@code -Dkipam.scale.churn=50} (simulated ADD+DEL pairs a
 * second) change the sizes, the measured minute and the churn, {@code -Dkipam.scale.lagSeconds=300}
 * and {@code -Dkipam.scale.lagChurn=100} the pool-status phase; {@code -Dkipam.seed=} repeats the
 * simulated nodes' choices. docs/benchmarks.md has results. Printed, never asserted.
 */
public class ScaleBenchmark {

  private static final int LIVE_PER_SIMULATED_NODE = 30;
  private static final int LIVE_ON_THE_REAL_NODE = 10;

  @Test
  public void measure() throws Exception {
    int[] sizes = Sizes.of("kipam.scale.nodes", "50,500,5000");
    Duration window = Duration.ofSeconds(Long.getLong("kipam.scale.windowSeconds", 60));
    double churn = Double.parseDouble(System.getProperty("kipam.scale.churn", "50"));
    long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    System.out.printf(
        "scale: sizes %s, %d s windows, %.0f simulated ADD+DEL/s, seed %d (-Dkipam.seed= repeats"
            + " it)%n",
        Arrays.toString(sizes), window.toSeconds(), churn, seed);
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("scale-bench")) {
      KubernetesClient client = processes.client();
      ControlPlane controlPlane = processes.controlPlane();
      // The simulated IPAddresses have no Pod: the audit would take them for orphans.
      processes.leadingOperator(Map.of("KIPAM_AUDIT_SECONDS", "36000"), Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("scale");
      Cluster.poolOnItsNetworkReadiedByOperator(
          client, pool, Cluster.spec("10.64.0.0/13", 26, 0)); // 8,192 slots of 64
      NodeRig rig = processes.node(pool, Map.of());
      AtomicLong poolWatchEvents = new AtomicLong();
      SharedIndexInformer<IPBlock> poolWatch =
          client
              .resources(IPBlock.class)
              .withLabel(ApiConstants.LABEL_POOL, pool)
              .inform(counting(poolWatchEvents));
      List<Row> rows = new ArrayList<>();
      int podIndex = 0;
      // The real node starts every window in the same state: its slot claimed, its pods live.
      for (; podIndex < LIVE_ON_THE_REAL_NODE; podIndex++) {
        assertThat(rig.add(pool, podIndex).ok()).as("warm-up ADD %d", podIndex).isTrue();
      }
      try (SimulatedNodes sims = new SimulatedNodes(client, pool, rig.namespaces(), seed)) {
        for (int size : sizes) {
          long grow = System.nanoTime();
          sims.growTo(size, 16);
          System.out.printf(
              "  %d simulated nodes registered, each holding a slot, in %.0f s%n",
              size, (System.nanoTime() - grow) / 1e9);
          Thread.sleep(20_000); // kipam-operator catches up with the new Nodes and blocks
          Map<String, Double> kinds0 =
              DaemonMetrics.samples(rig.daemon.socket, "kipam_node_watch_events_total");
          double events0 = DaemonMetrics.sum(rig.daemon.socket, "kipam_node_watch_events_total");
          double listings0 =
              DaemonMetrics.sum(rig.daemon.socket, "kipam_node_block_listings_total");
          long pool0 = poolWatchEvents.get();
          long writes0 = sims.writes();
          long start = System.nanoTime();
          CompletableFuture<int[]> churned = churn(sims, churn, window);
          int adds = 0;
          while (System.nanoTime() - start < window.toNanos()) {
            long due = start + TimeUnit.SECONDS.toNanos(adds);
            long wait = due - System.nanoTime();
            if (wait > 0) {
              TimeUnit.NANOSECONDS.sleep(wait);
            }
            if (rig.add(pool, podIndex).ok()) {
              adds++;
            }
            if (podIndex >= LIVE_ON_THE_REAL_NODE) {
              rig.del(pool, podIndex - LIVE_ON_THE_REAL_NODE);
            }
            podIndex++;
          }
          int[] simulated = churned.get();
          double minutes = (System.nanoTime() - start) / 60e9;
          Row row =
              new Row(
                  size,
                  (DaemonMetrics.sum(rig.daemon.socket, "kipam_node_watch_events_total") - events0)
                      / minutes,
                  (poolWatchEvents.get() - pool0) / minutes,
                  DaemonMetrics.sum(rig.daemon.socket, "kipam_node_block_listings_total")
                      - listings0,
                  simulated[0] / (minutes * 60),
                  (sims.writes() - writes0) / (minutes * 60),
                  adds,
                  rssMiB(controlPlane, "kube-apiserver"),
                  rssMiB(controlPlane, "etcd"));
          rows.add(row);
          System.out.println(row);
          Map<String, Double> kinds =
              DaemonMetrics.samples(rig.daemon.socket, "kipam_node_watch_events_total");
          StringBuilder byKind = new StringBuilder("        the daemon's events/min by kind:");
          kinds.forEach(
              (kind, n) ->
                  byKind.append(
                      String.format(
                          " %s %.0f",
                          kind.replaceAll("[^A-Za-z]|kind", ""),
                          (n - kinds0.getOrDefault(kind, 0.0)) / minutes)));
          System.out.println(byKind);
        }
        Duration churnFor = Duration.ofSeconds(Long.getLong("kipam.scale.lagSeconds", 300));
        double lagRate = Double.parseDouble(System.getProperty("kipam.scale.lagChurn", "100"));
        poolLag(client, pool, sims, poolWatch, lagRate, churnFor, LIVE_ON_THE_REAL_NODE);
      } finally {
        poolWatch.close();
      }
      report(rows);
      Row first = rows.get(0);
      Row last = rows.get(rows.size() - 1);
      System.out.printf(
          "the daemon's watch events per minute: %.0f with %d simulated nodes, %.0f with %d: %+.1f%%"
              + " (a watch of every block of the pool: %+.0f%%)%n",
          first.daemonEventsPerMinute(),
          first.nodes(),
          last.daemonEventsPerMinute(),
          last.nodes(),
          100 * (last.daemonEventsPerMinute() / first.daemonEventsPerMinute() - 1),
          100 * (last.poolWatchEventsPerMinute() / first.poolWatchEventsPerMinute() - 1));
      assertThat(rows).hasSize(sizes.length);
    }
  }

  /** One size's numbers. */
  record Row(
      int nodes,
      double daemonEventsPerMinute,
      double poolWatchEventsPerMinute,
      double listings,
      double simulatedAddsPerSecond,
      double simulatedWritesPerSecond,
      int realAdds,
      double apiServerMiB,
      double etcdMiB) {
    @Override
    public String toString() {
      return String.format(
          "  %5d simulated nodes: real daemon %6.0f watch events/min, %3.0f listings;"
              + " a watch of the pool's blocks %7.0f events/min; simulated %.1f ADD+DEL/s (%.0f"
              + " writes/s), real node %d ADDs; kube-apiserver %.0f MiB, etcd %.0f MiB RSS",
          nodes,
          daemonEventsPerMinute,
          listings,
          poolWatchEventsPerMinute,
          simulatedAddsPerSecond,
          simulatedWritesPerSecond,
          realAdds,
          apiServerMiB,
          etcdMiB);
    }
  }

  /**
   * Pool status behind the truth: {@code perSecond} ADDs a second on the simulated nodes, each with
   * a DEL, for {@code window}; in the first half every other DEL is left out and in the second half
   * every other one doubled, so the truth climbs and falls. The truth (the addresses held, sampled
   * every 200 ms) is set against the pool's {@code status.allocated} (read every second); the lag
   * of a reading is how far back the truth last took that value. The sum of the slots' own {@code
   * status.allocated} (from {@code slots}, a watch of the pool's blocks, sampled with the truth) is
   * measured the same way: it splits the lag into the nodes' share and kipam-operator's.
   */
  private static void poolLag(
      KubernetesClient client,
      String pool,
      SimulatedNodes sims,
      SharedIndexInformer<IPBlock> slots,
      double perSecond,
      Duration window,
      long realLive)
      throws Exception {
    List<long[]> truth = java.util.Collections.synchronizedList(new ArrayList<>());
    List<long[]> slotSums = java.util.Collections.synchronizedList(new ArrayList<>());
    List<long[]> status = new ArrayList<>();
    long start = System.nanoTime();
    java.util.concurrent.ScheduledExecutorService sampler =
        Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleAtFixedRate(
        () -> {
          long at = System.nanoTime() - start;
          truth.add(new long[] {at, sims.live() + realLive});
          slotSums.add(new long[] {at, slotSum(slots)});
        },
        0,
        200,
        TimeUnit.MILLISECONDS);
    int threads = 8;
    ExecutorService workers = Executors.newFixedThreadPool(threads);
    AtomicLong adds = new AtomicLong();
    AtomicLong dels = new AtomicLong();
    AtomicLong lost = new AtomicLong();
    List<Future<?>> parts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int offset = t;
      parts.add(
          workers.submit(
              () -> {
                for (long i = offset; ; i += threads) {
                  long due = start + (long) (i / perSecond * 1e9);
                  if (due - start >= window.toNanos()) {
                    return null;
                  }
                  long wait = due - System.nanoTime();
                  if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                  }
                  boolean climbing = due - start < window.toNanos() / 2;
                  int deletes = climbing ? (i % 2 == 0 ? 1 : 0) : (i % 2 == 0 ? 2 : 1);
                  try {
                    if (sims.addOnce()) {
                      adds.incrementAndGet();
                    }
                    for (int d = 0; d < deletes; d++) {
                      if (sims.deleteOnce()) {
                        dels.incrementAndGet();
                      }
                    }
                  } catch (RuntimeException e) {
                    lost.incrementAndGet();
                  }
                }
              }));
    }
    workers.shutdown();
    while (!workers.isTerminated()) {
      var object = client.resources(io.kipam.api.v1alpha1.IPPool.class).withName(pool).get();
      Long allocated = object.getStatus() == null ? null : object.getStatus().getAllocated();
      if (allocated != null) {
        status.add(new long[] {System.nanoTime() - start, allocated});
      }
      Thread.sleep(1000);
    }
    for (Future<?> part : parts) {
      part.get();
    }
    Thread.sleep(15_000); // the status catches up with the last changes
    for (int i = 0; i < 15; i++) {
      var object = client.resources(io.kipam.api.v1alpha1.IPPool.class).withName(pool).get();
      status.add(new long[] {System.nanoTime() - start, object.getStatus().getAllocated()});
    }
    sampler.shutdownNow();
    double seconds = window.toNanos() / 1e9;
    List<long[]> truths;
    synchronized (truth) {
      truths = new ArrayList<>(truth);
    }
    List<long[]> sums;
    synchronized (slotSums) {
      // one reading a second, as the pool's status is read
      sums = new ArrayList<>();
      for (int i = 0; i < slotSums.size(); i += 5) {
        sums.add(slotSums.get(i));
      }
    }
    System.out.printf(
        "pool status lag: %d ADDs (%.1f/s) and %d DELs (%.1f/s) over %d simulated nodes in %.0f s"
            + " (%d lost to API errors); final status %d, truth %d%n",
        adds.get(),
        adds.get() / seconds,
        dels.get(),
        dels.get() / seconds,
        sims.size(),
        seconds,
        lost.get(),
        status.get(status.size() - 1)[1],
        sims.live() + realLive);
    System.out.println("  " + lagLine("IPPool status.allocated", status, truths));
    System.out.println("  " + lagLine("the slots' status.allocated, summed", sums, truths));
    lagChart(truths, sums, status);
  }

  /** Lag percentiles of {@code readings} behind {@code truths}, and their largest gap. */
  private static String lagLine(String what, List<long[]> readings, List<long[]> truths) {
    List<Double> lags = new ArrayList<>();
    long worstError = 0;
    for (long[] reading : readings) {
      lags.add(lagOf(reading, truths));
      worstError = Math.max(worstError, Math.abs(reading[1] - truthAt(reading[0], truths)));
    }
    List<Double> sorted = new ArrayList<>(lags);
    java.util.Collections.sort(sorted);
    return String.format(
        "%s: %d readings, lag p50 %.1f s, p90 %.1f s, p99 %.1f s, max %.1f s, %d over 10 s;"
            + " largest gap to the truth %d addresses",
        what,
        lags.size(),
        sorted.get(sorted.size() / 2),
        sorted.get((int) (sorted.size() * 0.9)),
        sorted.get(Math.min(sorted.size() - 1, (int) (sorted.size() * 0.99))),
        sorted.get(sorted.size() - 1),
        lags.stream().filter(l -> l > 10).count(),
        worstError);
  }

  private static long slotSum(SharedIndexInformer<IPBlock> slots) {
    long sum = 0;
    for (IPBlock block : slots.getStore().list()) {
      if (block.getStatus() != null && block.getStatus().getAllocated() != null) {
        sum += block.getStatus().getAllocated();
      }
    }
    return sum;
  }

  /**
   * How far back (s) the truth last took the value of {@code reading}; 0 if it has it now. The
   * truth is sampled every 200 ms, in which it changes by dozens at 100 ADDs a second: the first
   * sample after the reading counts as "now", so a value the truth took between two samples is not
   * mistaken for one it never had.
   */
  private static double lagOf(long[] reading, List<long[]> truths) {
    int after = 0;
    while (after < truths.size() && truths.get(after)[0] <= reading[0]) {
      after++;
    }
    long lowest = after < truths.size() ? truths.get(after)[1] : Long.MAX_VALUE;
    long highest = after < truths.size() ? truths.get(after)[1] : Long.MIN_VALUE;
    for (int i = after - 1; i >= 0; i--) {
      long[] sample = truths.get(i);
      lowest = Math.min(lowest, sample[1]);
      highest = Math.max(highest, sample[1]);
      if (reading[1] >= lowest && reading[1] <= highest) {
        return (reading[0] - sample[0]) / 1e9;
      }
    }
    return reading[0] / 1e9;
  }

  private static long truthAt(long at, List<long[]> truths) {
    long value = truths.isEmpty() ? 0 : truths.get(0)[1];
    for (long[] sample : truths) {
      if (sample[0] > at) {
        break;
      }
      value = sample[1];
    }
    return value;
  }

  private static void lagChart(List<long[]> truths, List<long[]> sums, List<long[]> status)
      throws Exception {
    System.setProperty("java.awt.headless", "true");
    XYSeries truth = new XYSeries("addresses held (truth)");
    truths.forEach(t -> truth.add(t[0] / 1e9, t[1]));
    XYSeries slots = new XYSeries("the slots' status.allocated, summed");
    sums.forEach(s -> slots.add(s[0] / 1e9, s[1]));
    XYSeries allocated = new XYSeries("IPPool status.allocated");
    status.forEach(s -> allocated.add(s[0] / 1e9, s[1]));
    XYSeriesCollection data = new XYSeriesCollection();
    data.addSeries(truth);
    data.addSeries(slots);
    data.addSeries(allocated);
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            "Pool status against the truth under churn",
            "seconds",
            "allocated addresses",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    ((org.jfree.chart.axis.NumberAxis) ((XYPlot) chart.getPlot()).getRangeAxis())
        .setAutoRangeIncludesZero(false);
    Path dir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
    Files.createDirectories(dir);
    ChartUtils.saveChartAsPNG(dir.resolve("scale-pool-lag.png").toFile(), chart, 960, 560);
  }

  /**
   * Churns at {@code perSecond} ADD+DEL pairs on the simulated nodes for {@code window}, on four
   * threads; the ADD+DEL pairs made, once all are done.
   */
  private static CompletableFuture<int[]> churn(
      SimulatedNodes sims, double perSecond, Duration window) {
    int threads = 4;
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Integer>> parts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int offset = t;
      parts.add(
          CompletableFuture.supplyAsync(
              () -> {
                int done = 0;
                for (long i = offset; ; i += threads) {
                  long due = start + (long) (i / perSecond * 1e9);
                  if (due - start >= window.toNanos()) {
                    return done;
                  }
                  for (long wait; (wait = due - System.nanoTime()) > 0; ) {
                    LockSupport.parkNanos(wait);
                  }
                  try {
                    sims.churnOnce(LIVE_PER_SIMULATED_NODE);
                    done++;
                  } catch (RuntimeException e) {
                    // an overloaded API server: that ADD is lost, the rate shows it
                  }
                }
              },
              pool));
    }
    pool.shutdown();
    return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
        .thenApply(v -> new int[] {parts.stream().mapToInt(CompletableFuture::join).sum()});
  }

  private static <T> ResourceEventHandler<T> counting(AtomicLong events) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        events.incrementAndGet();
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        events.incrementAndGet();
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        events.incrementAndGet();
      }
    };
  }

  private static double rssMiB(ControlPlane controlPlane, String name) {
    Long pid = controlPlane.pids().get(name);
    return pid == null ? Double.NaN : ProcessCpu.rssMiB(pid);
  }

  /** Plain numbers on a log axis, not powers of ten. */
  private static LogAxis readable(LogAxis axis) {
    axis.setNumberFormatOverride(new java.text.DecimalFormat("#,##0"));
    return axis;
  }

  private static void report(List<Row> rows) throws Exception {
    System.setProperty("java.awt.headless", "true");
    XYSeriesCollection data = new XYSeriesCollection();
    XYSeries daemon = new XYSeries("kipam-node (its own node's objects)");
    XYSeries poolWatch = new XYSeries("a watch of every block of the pool");
    StringBuilder text = new StringBuilder();
    for (Row row : rows) {
      daemon.add(row.nodes(), Math.max(1, row.daemonEventsPerMinute()));
      poolWatch.add(row.nodes(), Math.max(1, row.poolWatchEventsPerMinute()));
      text.append(row).append('\n');
    }
    data.addSeries(daemon);
    data.addSeries(poolWatch);
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            "Watch events one node receives while the others churn",
            "simulated nodes in the pool",
            "watch events per minute",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    XYPlot plot = (XYPlot) chart.getPlot();
    plot.setDomainAxis(readable(new LogAxis("simulated nodes in the pool (log scale)")));
    plot.setRangeAxis(readable(new LogAxis("watch events per minute (log scale)")));
    Path dir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("scale.txt"), text);
    ChartUtils.saveChartAsPNG(dir.resolve("scale-watch-events.png").toFile(), chart, 960, 560);
    System.out.printf("report and chart written to %s%n", dir.toAbsolutePath().normalize());
  }
}
