package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.system.harness.ApiRequestCounts;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A large pool pays one write per ADD: a /16 in /26 slots, 200 pods on 4 nodes, daemons with shared
 * slots allowed and the operator running. kube-apiserver's own request counters tell the writes per
 * ADD by kind (IPAddress creates, slot claims, coalesced block status); no slot turns Shared, no
 * sub-claim is made, and no node records demand ({@code kipam.io/demand}: a Node watch counts every
 * update that carries it, and the core group's counters every Node patch). Numbers are printed,
 * never asserted; the run checks only that every ADD succeeded. Run with {@code ./mvnw -B -pl
 * system-tests -am verify -Pbenchmark -DskipIT -DskipE2E -Dit.test=LargePoolWritesBenchmark};
 * docs/benchmarks.md has results.
 */
public class LargePoolWritesBenchmark {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final int NODES = 4;
  private static final int PODS_PER_NODE = 50;

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = ControlPlane.shared().client();

  @Test
  public void measure() throws Exception {
    KipamCrds.install(client);
    try (KipamProcesses processes = new KipamProcesses(controlPlane, client, "large")) {
      processes.leadingOperator(Map.of(), Duration.ofSeconds(60));
      String pool = Cluster.readiedPool(client, "large", Cluster.spec("10.204.0.0/16", 26, 30));
      List<NodeRig> nodes = new ArrayList<>();
      for (int n = 0; n < NODES; n++) {
        nodes.add(processes.node(pool, Map.of("KIPAM_SHARED_SLOTS", "true")));
      }
      ApiRequestCounts before = ApiRequestCounts.read(client);
      ApiRequestCounts nodesBefore = ApiRequestCounts.read(client, "");
      // Demand is paid only by a pool that is short: every change of a node's kipam.io/demand
      // during the burst is counted.
      java.util.Set<String> ours = new java.util.HashSet<>();
      nodes.forEach(n -> ours.add(n.node));
      java.util.concurrent.atomic.AtomicInteger demandSeen =
          new java.util.concurrent.atomic.AtomicInteger();
      io.fabric8.kubernetes.client.Watch demandWatch =
          client
              .nodes()
              .watch(
                  new io.fabric8.kubernetes.client.Watcher<>() {
                    @Override
                    public void eventReceived(
                        Action action, io.fabric8.kubernetes.api.model.Node n) {
                      java.util.Map<String, String> a = n.getMetadata().getAnnotations();
                      if (ours.contains(n.getMetadata().getName())
                          && a != null
                          && a.containsKey(ApiConstants.ANNOTATION_DEMAND)) {
                        demandSeen.incrementAndGet();
                      }
                    }

                    @Override
                    public void onClose(io.fabric8.kubernetes.client.WatcherException e) {}
                  });
      long start = System.nanoTime();
      ExecutorService callers = Executors.newFixedThreadPool(NODES);
      List<Future<Integer>> ok = new ArrayList<>();
      try {
        for (NodeRig node : nodes) {
          ok.add(
              callers.submit(
                  () -> {
                    int done = 0;
                    for (int i = 0; i < PODS_PER_NODE; i++) {
                      done += node.add(pool, i).ok() ? 1 : 0;
                    }
                    return done;
                  }));
        }
        int succeeded = 0;
        for (Future<Integer> f : ok) {
          succeeded += f.get();
        }
        int adds = succeeded;
        double seconds = (System.nanoTime() - start) / 1e9;
        // Let the coalesced block status writes land, as they do after a burst.
        Thread.sleep(7_000);
        Map<ApiRequestCounts.Kind, Double> delta = ApiRequestCounts.read(client).since(before);
        demandWatch.close();
        double nodePatches =
            ApiRequestCounts.read(client, "").since(nodesBefore).entrySet().stream()
                .filter(
                    e ->
                        e.getKey().resource().equals("nodes")
                            && e.getKey().subresource().isEmpty()
                            && e.getKey().verb().equals("PATCH"))
                .mapToDouble(Map.Entry::getValue)
                .sum();
        List<IPBlock> blocks =
            client
                .resources(IPBlock.class)
                .withLabel(ApiConstants.LABEL_POOL, pool)
                .list()
                .getItems();
        long subClaims = blocks.stream().filter(b -> b.getSpec().getParent() != null).count();
        long shared =
            blocks.stream()
                .filter(
                    b ->
                        b.getSpec().getNode() == null
                            || b.getStatus() != null
                                && b.getStatus().getMode() != null
                                && b.getStatus().getMode().name().equals("Shared"))
                .count();
        System.out.printf(
            "large pool (/16 in /26 slots), %d ADDs on %d nodes in %.1f s: %.2f API writes per ADD"
                + " in all; %d slots claimed, %d Shared, %d sub-claims; demand: %d Node updates"
                + " carried kipam.io/demand, %.0f Node patches%n",
            adds,
            NODES,
            seconds,
            ApiRequestCounts.writes(delta) / adds,
            blocks.size() - subClaims,
            shared,
            subClaims,
            demandSeen.get(),
            nodePatches);
        delta.entrySet().stream()
            .sorted(Comparator.comparing(e -> e.getKey().toString()))
            .forEach(
                e ->
                    System.out.printf(
                        "  %-32s %6.0f  (%.2f per ADD)%n",
                        e.getKey(), e.getValue(), e.getValue() / adds));
        assertThat(adds).as("every ADD succeeded").isEqualTo(NODES * PODS_PER_NODE);
      } finally {
        callers.shutdownNow();
      }
    }
  }
}
