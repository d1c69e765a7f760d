package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.harness.ApiRequestCounts;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How many Node status writes kipam-operator's {@code kipam.io/ip} costs: 50 Node objects, pods
 * churning at 10 ADDs (and as many DELs) a second for 60 s on 4 of them through real kipam-node
 * daemons and the installed executable, in a host-prefix pool (every ADD claims a block and every
 * DEL gives one back, so every pod changes every Node's value: the worst case for coalescing).
 * kube-apiserver's own {@code apiserver_request_total} counts the PATCHes of {@code nodes/status}.
 * A control plane of its own, so no other Node is written. Printed, never asserted; run with {@code
 * ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=NodeCapacityBenchmark}; docs/benchmarks.md has results.
 */
public class NodeCapacityBenchmark {

  private static final int NODES = 50;
  private static final int DAEMONS = 4;
  private static final int ADDS_PER_SECOND = 10;
  private static final Duration CHURN = Duration.ofSeconds(60);
  private static final int INTERVAL_SECONDS = 5;
  private static final int LIVE_PODS_PER_NODE = 10;

  @Test
  public void measure() throws Exception {
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("capacity-bench")) {
      KubernetesClient client = processes.client();
      processes.leadingOperator(
          Map.of("KIPAM_CAPACITY_SECONDS", String.valueOf(INTERVAL_SECONDS)),
          Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("bench");
      Cluster.poolOnItsNetworkReadiedByOperator(client, pool, Cluster.spec("10.213.0.0/20", 32, 0));
      List<NodeRig> rigs = new ArrayList<>();
      for (int n = 0; n < DAEMONS; n++) {
        rigs.add(processes.node(pool, Map.of("KIPAM_BLOCK_STATUS_SECONDS", "5")));
      }
      for (int n = DAEMONS; n < NODES; n++) {
        Fixtures.registerNode(client, Fixtures.uniqueName("node"));
      }
      Thread.sleep(3L * INTERVAL_SECONDS * 1000); // every Node has its first value

      ApiRequestCounts before = ApiRequestCounts.read(client, "");
      long start = System.nanoTime();
      ExecutorService callers = Executors.newFixedThreadPool(DAEMONS);
      List<Future<int[]>> done = new ArrayList<>();
      double perNodeRate = (double) ADDS_PER_SECOND / DAEMONS;
      for (NodeRig rig : rigs) {
        done.add(
            callers.submit(
                () -> {
                  int adds = 0;
                  int failed = 0;
                  for (int i = 0; ; i++) {
                    long due = start + (long) (i / perNodeRate * 1e9);
                    if (due - start > CHURN.toNanos()) {
                      break;
                    }
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                      TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    if (rig.add(pool, i).ok()) {
                      adds++;
                    } else {
                      failed++;
                    }
                    if (i >= LIVE_PODS_PER_NODE) {
                      rig.del(pool, i - LIVE_PODS_PER_NODE);
                    }
                  }
                  return new int[] {adds, failed};
                }));
      }
      int adds = 0;
      int failed = 0;
      for (Future<int[]> f : done) {
        adds += f.get()[0];
        failed += f.get()[1];
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      callers.shutdown();
      Map<ApiRequestCounts.Kind, Double> delta = ApiRequestCounts.read(client, "").since(before);
      double statusPatches =
          delta.getOrDefault(new ApiRequestCounts.Kind("nodes", "status", "PATCH"), 0.0);
      double intervals = seconds / INTERVAL_SECONDS;
      System.out.printf(
          "Node capacity: %d Nodes, %d ADDs (%.1f/s, %d failed) and as many DELs in %.1f s,"
              + " host-prefix pool%n",
          NODES, adds, adds / seconds, failed, seconds);
      System.out.printf(
          "  Node status PATCHes: %.0f = %.0f per minute = %.2f per Node per %d-s interval"
              + " (coalescing bound: 1.00)%n",
          statusPatches,
          statusPatches / seconds * 60,
          statusPatches / NODES / intervals,
          INTERVAL_SECONDS);
      System.out.printf(
          "  without coalescing (one write per Node per block change): about %.0f per minute%n",
          2.0 * adds / seconds * 60 * NODES);
      assertThat(failed).as("failed ADDs").isZero();
    }
  }
}
