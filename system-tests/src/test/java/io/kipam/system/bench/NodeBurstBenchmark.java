package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.SimulatedNodes;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * How soon Nodes created all at once carry {@code kipam.io/ip}, so the scheduler can place pods
 * that request it there: a real kipam-operator process, a pool every Node may use, simulated nodes
 * holding a few thousand IPAddresses in three namespaces with the audit running every 10 s over
 * them (it has a budget of its own), then 1,000 Node objects created by 32 writers at once. For
 * each Node, the time from its create call's answer to the moment a watch shows a {@code kipam.io/}
 * resource in its {@code status.allocatable}: printed as count, p50, p90, p99, max and how many
 * took longer than 10 s. Printed, never asserted.
 *
 * <p>Run with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=NodeBurstBenchmark}; {@code -Dkipam.burst.nodes=1000} changes the count, {@code
 * -Dkipam.seed=} repeats the simulated nodes' choices. docs/benchmarks.md has results.
 */
public class NodeBurstBenchmark {

  @Test
  public void measure() throws Exception {
    int count = Integer.getInteger("kipam.burst.nodes", 1000);
    long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    System.out.printf("node burst: %d Nodes, seed %d (-Dkipam.seed= repeats it)%n", count, seed);
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("burst-bench")) {
      KubernetesClient client = processes.client();
      processes.leadingOperator(
          Map.of("KIPAM_AUDIT_SECONDS", "10", "KIPAM_ORPHAN_GRACE_SECONDS", "36000"),
          Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("burst");
      Cluster.poolOnItsNetworkReadiedByOperator(client, pool, Cluster.spec("10.64.0.0/13", 26, 0));
      List<String> namespaces = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        namespaces.add(Fixtures.namespace(client, "burst-bench"));
      }
      try (SimulatedNodes sims = new SimulatedNodes(client, pool, namespaces, seed)) {
        sims.growTo(50, 8);
        while (sims.live() < 3000) {
          sims.addOnce();
        }
        System.out.printf(
            "  %d simulated nodes hold %d IPAddresses; the audit reads them every 10 s%n",
            sims.size(), sims.live());
      }
      Thread.sleep(15_000);

      Map<String, Long> created = new ConcurrentHashMap<>();
      Map<String, Long> published = new ConcurrentHashMap<>();
      SharedIndexInformer<Node> watch =
          client
              .nodes()
              .inform(
                  new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Node node) {
                      seen(node);
                    }

                    @Override
                    public void onUpdate(Node before, Node node) {
                      seen(node);
                    }

                    @Override
                    public void onDelete(Node node, boolean unknown) {}

                    private void seen(Node node) {
                      if (node.getStatus() != null
                          && node.getStatus().getAllocatable() != null
                          && node.getStatus().getAllocatable().keySet().stream()
                              .anyMatch(r -> r.startsWith("kipam.io/"))) {
                        published.putIfAbsent(node.getMetadata().getName(), System.nanoTime());
                      }
                    }
                  });
      ExecutorService writers = Executors.newFixedThreadPool(32);
      List<Future<?>> writes = new ArrayList<>();
      long start = System.nanoTime();
      for (int i = 0; i < count; i++) {
        String name = String.format("burst-%04d", i);
        writes.add(
            writers.submit(
                () -> {
                  client.nodes().resource(Fixtures.bareNode(name)).create();
                  created.put(name, System.nanoTime());
                  return null;
                }));
      }
      for (Future<?> write : writes) {
        write.get();
      }
      writers.shutdown();
      double createSeconds = (System.nanoTime() - start) / 1e9;
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (published.keySet().containsAll(created.keySet()) == false
          && System.nanoTime() < deadline) {
        Thread.sleep(200);
      }
      watch.close();
      List<Double> waits = new ArrayList<>();
      int missing = 0;
      for (Map.Entry<String, Long> node : created.entrySet()) {
        Long at = published.get(node.getKey());
        if (at == null) {
          missing++;
        } else {
          waits.add(Math.max(0, at - node.getValue()) / 1e9);
        }
      }
      Collections.sort(waits);
      long over = waits.stream().filter(w -> w > 10).count();
      System.out.printf(
          "  %d Nodes created in %.1f s; %d carry kipam.io/ip: from create to value p50 %.1f s,"
              + " p90 %.1f s, p99 %.1f s, max %.1f s; %d took over 10 s, %d never got it within"
              + " 120 s%n",
          count,
          createSeconds,
          waits.size(),
          at(waits, 0.5),
          at(waits, 0.9),
          at(waits, 0.99),
          at(waits, 1.0),
          over,
          missing);
      assertThat(created).hasSize(count);
    }
  }

  private static double at(List<Double> sorted, double quantile) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(quantile * sorted.size()) - 1));
  }
}
