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
import io.kipam.system.harness.SimulatedNodes;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * kube-apiserver's and etcd's memory; and it draws both event rates over the number of nodes.
 *
 * <p>Run with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=ScaleBenchmark}; {@code -Dkipam.scale.nodes=50,500,5000}, {@code
 * -Dkipam.scale.windowSeconds=60} and {@code -Dkipam.scale.churn=50} (simulated ADD+DEL pairs a
 * second) change the sizes, the measured minute and the churn; {@code -Dkipam.seed=} repeats the
 * simulated nodes' choices. docs/benchmarks.md has results. Printed, never asserted.
 */
public class ScaleBenchmark {

  private static final int LIVE_PER_SIMULATED_NODE = 30;
  private static final int LIVE_ON_THE_REAL_NODE = 10;

  @Test
  public void measure() throws Exception {
    int[] sizes =
        Arrays.stream(System.getProperty("kipam.scale.nodes", "50,500,5000").split(","))
            .map(String::trim)
            .mapToInt(Integer::parseInt)
            .toArray();
    Duration window = Duration.ofSeconds(Long.getLong("kipam.scale.windowSeconds", 60));
    double churn = Double.parseDouble(System.getProperty("kipam.scale.churn", "50"));
    long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    System.out.printf(
        "scale: sizes %s, %d s windows, %.0f simulated ADD+DEL/s, seed %d (-Dkipam.seed= repeats"
            + " it)%n",
        Arrays.toString(sizes), window.toSeconds(), churn, seed);
    try (ControlPlane controlPlane = ControlPlane.fresh();
        KipamProcesses processes =
            new KipamProcesses(controlPlane, controlPlane.client(), "scale-bench")) {
      KubernetesClient client = controlPlane.client();
      KipamCrds.install(client);
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
      try (SimulatedNodes sims = new SimulatedNodes(client, pool, rig.namespaces(), seed)) {
        for (int size : sizes) {
          long grow = System.nanoTime();
          sims.growTo(size, 16);
          System.out.printf(
              "  %d simulated nodes registered, each holding a slot, in %.0f s%n",
              size, (System.nanoTime() - grow) / 1e9);
          Thread.sleep(20_000); // kipam-operator catches up with the new Nodes and blocks
          double events0 = DaemonMetrics.sum(rig.daemon.socket, "kipam_node_watch_events_total");
          double listings0 =
              DaemonMetrics.sum(rig.daemon.socket, "kipam_node_block_listings_total");
          long pool0 = poolWatchEvents.get();
          long writes0 = sims.writes();
          long start = System.nanoTime();
          Future<int[]> churned = churn(sims, churn, window);
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
        }
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

  /** Churns at {@code perSecond} ADD+DEL pairs on the simulated nodes for {@code window}. */
  private static Future<int[]> churn(SimulatedNodes sims, double perSecond, Duration window) {
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Integer>> parts = new ArrayList<>();
    long start = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      int offset = t;
      parts.add(
          pool.submit(
              () -> {
                int done = 0;
                for (long i = offset; ; i += threads) {
                  long due = start + (long) (i / perSecond * 1e9);
                  if (due - start >= window.toNanos()) {
                    return done;
                  }
                  long wait = due - System.nanoTime();
                  if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                  }
                  try {
                    sims.churnOnce(LIVE_PER_SIMULATED_NODE);
                    done++;
                  } catch (RuntimeException e) {
                    // an overloaded API server: that ADD is lost, the rate shows it
                  }
                }
              }));
    }
    pool.shutdown();
    return Executors.newSingleThreadExecutor()
        .submit(
            () -> {
              int done = 0;
              for (Future<Integer> part : parts) {
                done += part.get();
              }
              return new int[] {done};
            });
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
    if (pid == null) {
      return Double.NaN;
    }
    try {
      for (String line : Files.readAllLines(Path.of("/proc", pid.toString(), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    } catch (java.io.IOException e) {
      return Double.NaN;
    }
    return Double.NaN;
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
    plot.setDomainAxis(new LogAxis("simulated nodes in the pool (log scale)"));
    plot.setRangeAxis(new LogAxis("watch events per minute (log scale)"));
    Path dir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("scale.txt"), text);
    ChartUtils.saveChartAsPNG(dir.resolve("scale-watch-events.png").toFile(), chart, 960, 560);
    System.out.printf("report and chart written to %s%n", dir.toAbsolutePath().normalize());
  }
}
