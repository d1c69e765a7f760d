package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.kube.ApiTraffic;
import io.kipam.node.kube.NodeWatch;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.SimulatedNodes;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.RequestLog;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * A rollout: every node's kipam-node starts again within a window, as a DaemonSet update does. The
 * nodes are simulated ({@link SimulatedNodes}: Node objects, slots, addresses); each daemon's start
 * is kipam-node's own {@link NodeWatch} (the watches of pools, its Node, its blocks, its addresses
 * and its pods, started, synced, then closed as the next version takes over), all in this JVM on
 * one client whose requests are logged, so 5,000 starts cost no JVM each. Printed: the requests of
 * the starts by verb and resource (and per start), the lists' queries by kind (a consistent read
 * with a page size, which kube-apiserver serves from its watch cache once the cache has caught up;
 * never {@code resourceVersion=0}), the starts' time to sync (p50, p99, max), kube-apiserver's list
 * requests that reached etcd (its metric {@code etcd_requests_total}) and its memory before and
 * after. Printed, never asserted.
 *
 * <p>Run with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=RolloutBenchmark -Dtest='NoSuchTest*' -Dsurefire.failIfNoSpecifiedTests=false
 * -Dfailsafe.failIfNoSpecifiedTests=false}; {@code -Dkipam.rollout.nodes} (5000), {@code
 * -Dkipam.rollout.addresses} per node (30), {@code -Dkipam.rollout.minutes} (10), {@code
 * -Dkipam.seed=}.
 */
public class RolloutBenchmark {

  @Test
  public void measure() throws Exception {
    int nodes = Integer.getInteger("kipam.rollout.nodes", 5000);
    int perNode = Integer.getInteger("kipam.rollout.addresses", 30);
    int minutes = Integer.getInteger("kipam.rollout.minutes", 10);
    long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    System.out.printf(
        "rollout: %d simulated nodes of %d addresses, every daemon started again within %d"
            + " minutes, seed %d (-Dkipam.seed= repeats it)%n",
        nodes, perNode, minutes, seed);
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("rollout-bench")) {
      KubernetesClient client = processes.client();
      ControlPlane controlPlane = processes.controlPlane();
      processes.operator().startLeading(Map.of(), Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("rollout");
      Cluster.poolOnItsNetworkReadiedByOperator(client, pool, Cluster.spec("10.64.0.0/12", 26, 0));
      List<String> namespaces = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        namespaces.add(Fixtures.namespace(client, "rollout-bench"));
      }
      List<String> names = new ArrayList<>();
      try (SimulatedNodes sims =
          new SimulatedNodes(client, pool, namespaces, seed).withAttachments()) {
        long start = System.nanoTime();
        sims.growTo(nodes, 16);
        sims.fillTo((long) nodes * perNode, 16);
        System.out.printf(
            "  %d simulated nodes holding %d IPAddresses in %.0f s%n",
            sims.size(), sims.live(), (System.nanoTime() - start) / 1e9);
        names.addAll(sims.nodes());
      }
      double apiServerBefore = AuditScaleBenchmark.rssMiB(controlPlane, "kube-apiserver");
      Map<String, Double> etcdBefore =
          ApiServerMetrics.sumBy(client, "etcd_requests_total", "operation");

      RequestLog log = new RequestLog();
      List<Double> syncSeconds = java.util.Collections.synchronizedList(new ArrayList<>());
      long window = Duration.ofMinutes(minutes).toNanos();
      long windowStart = System.nanoTime();
      ExecutorService starts = Executors.newFixedThreadPool(16);
      List<Future<?>> done = new ArrayList<>();
      try (KubernetesClient daemons = log.client(controlPlane.adminConfig())) {
        for (int i = 0; i < names.size(); i++) {
          String node = names.get(i);
          long due = windowStart + window * i / names.size();
          done.add(
              starts.submit(
                  () -> {
                    while (System.nanoTime() < due) {
                      Thread.sleep(5);
                    }
                    long began = System.nanoTime();
                    try (NodeWatch watch =
                        new NodeWatch(
                            daemons,
                            node,
                            new Ledger(node, Clock.systemUTC()),
                            false,
                            new ApiTraffic(new PrometheusRegistry()))) {
                      watch.start(Duration.ofSeconds(15));
                      syncSeconds.add((System.nanoTime() - began) / 1e9);
                    }
                    return null;
                  }));
        }
        for (Future<?> f : done) {
          f.get();
        }
      } finally {
        starts.shutdown();
      }
      double took = (System.nanoTime() - windowStart) / 1e9;
      List<RequestLog.Request> requests = log.take();
      Map<String, Double> etcdAfter =
          ApiServerMetrics.sumBy(client, "etcd_requests_total", "operation");

      Map<String, Integer> counts = RequestLog.counts(requests);
      Map<String, String> perStart = new TreeMap<>();
      counts.forEach((k, n) -> perStart.put(k, String.format("%.2f", n / (double) names.size())));
      Map<String, Integer> listQueries = new TreeMap<>();
      for (RequestLog.Request r : requests) {
        if (r.verb().equals("LIST")) {
          String shape =
              r.query().replaceAll("(labelSelector|fieldSelector)=[^&]*", "$1=<its node>");
          listQueries.merge(r.resource() + "?" + shape, 1, Integer::sum);
        }
      }
      long zero =
          requests.stream()
              .filter(r -> r.verb().equals("LIST"))
              .filter(r -> r.query().matches("(^|.*&)resourceVersion=0(&.*|$)"))
              .count();
      Map<String, String> etcd = new TreeMap<>();
      etcdAfter.forEach(
          (op, n) -> etcd.put(op, String.format("%.0f", n - etcdBefore.getOrDefault(op, 0.0))));
      List<String> rows = new ArrayList<>();
      rows.add(
          String.format(
              "  %d daemon starts in %.0f s; time to sync p50 %.2f s, p99 %.2f s, max %.2f s",
              names.size(),
              took,
              Percentiles.of(syncSeconds, 50),
              Percentiles.of(syncSeconds, 99),
              Percentiles.of(syncSeconds, 100)));
      rows.add("  their requests by verb and resource: " + counts);
      rows.add("  per start: " + perStart);
      rows.add("  their lists, by resource and query: " + listQueries);
      rows.add("  lists at resourceVersion=0 (any staleness): " + zero);
      rows.add("  kube-apiserver's requests to etcd during the rollout, by operation: " + etcd);
      rows.add(
          String.format(
              "  kube-apiserver %.0f MiB RSS before the rollout, %.0f MiB after",
              apiServerBefore, AuditScaleBenchmark.rssMiB(controlPlane, "kube-apiserver")));
      ApiServerMetrics.report("rollout.txt", rows);
      assertThat(syncSeconds).hasSize(names.size());
    }
  }
}
