package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.SimulatedNodes;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Nodes that come and go: simulated nodes ({@link SimulatedNodes}, their IPAddresses carrying
 * {@code kipam.io/attachment} as kipam-node writes them) fill a pool; then, over a window, some of
 * them vanish as a cloud node does (the Node object deleted, no DEL ever made, the pods gone with
 * it) while as many new ones join, and the rest churn their addresses. A real kipam-operator
 * process gives the vanished nodes' addresses back. Printed: for every address of a vanished Node,
 * the time from its Node's deletion to its IPAddress's (p50, p99, max, and how many never came back
 * within the wait), the audit passes' durations, kube-apiserver's requests per second by verb over
 * the window (its own metric {@code apiserver_request_total}), the duplicates the audit reported,
 * and kipam-operator's heap after a full GC before and after. Printed, never asserted.
 *
 * <p>Run with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=NodeChurnBenchmark -Dtest='NoSuchTest*' -Dsurefire.failIfNoSpecifiedTests=false
 * -Dfailsafe.failIfNoSpecifiedTests=false}. {@code -Dkipam.churn.nodes} (5000), {@code
 * -Dkipam.churn.addresses} per node (30), {@code -Dkipam.churn.turnover}, the nodes that vanish and
 * the nodes that join (a tenth of the nodes), {@code -Dkipam.churn.minutes} (10), {@code
 * -Dkipam.churn.timers}: {@code defaults} (kipam-operator's audit every 300 s, orphan grace 600 s:
 * what users get, so the addresses come back a quarter of an hour after their Node goes) or {@code
 * short} (every 10 s, grace 30 s); {@code -Dkipam.seed=} repeats the simulated nodes' choices.
 */
public class NodeChurnBenchmark {

  @Test
  public void measure() throws Exception {
    int nodes = Integer.getInteger("kipam.churn.nodes", 5000);
    int perNode = Integer.getInteger("kipam.churn.addresses", 30);
    int turnover = Integer.getInteger("kipam.churn.turnover", nodes / 10);
    int minutes = Integer.getInteger("kipam.churn.minutes", 10);
    boolean shortTimers = "short".equals(System.getProperty("kipam.churn.timers", "defaults"));
    long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    Duration grace = Duration.ofSeconds(shortTimers ? 30 : 600);
    Duration auditEvery = Duration.ofSeconds(shortTimers ? 10 : 300);
    System.out.printf(
        "node churn: %d simulated nodes of %d addresses, %d vanish and %d join over %d minutes,"
            + " audit every %d s with an orphan grace of %d s (%s), seed %d (-Dkipam.seed= repeats"
            + " it)%n",
        nodes,
        perNode,
        turnover,
        turnover,
        minutes,
        auditEvery.toSeconds(),
        grace.toSeconds(),
        shortTimers ? "shortened" : "kipam-operator's defaults",
        seed);
    Map<String, String> env =
        shortTimers
            ? Map.of("KIPAM_AUDIT_SECONDS", "10", "KIPAM_ORPHAN_GRACE_SECONDS", "30")
            : Map.of();
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("churn-bench")) {
      KubernetesClient client = processes.client();
      ControlPlane controlPlane = processes.controlPlane();
      OperatorProcess operator =
          processes.operator().withMetricsPort().startLeading(env, Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("churn");
      Cluster.poolOnItsNetworkReadiedByOperator(client, pool, Cluster.spec("10.64.0.0/12", 26, 0));
      List<String> namespaces = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        namespaces.add(Fixtures.namespace(client, "churn-bench"));
      }
      try (SimulatedNodes sims =
          new SimulatedNodes(client, pool, namespaces, seed).withAttachments()) {
        long start = System.nanoTime();
        sims.growTo(nodes, 16);
        sims.fillTo((long) nodes * perNode, 16);
        System.out.printf(
            "  %d simulated nodes holding %d IPAddresses in %.0f s%n",
            sims.size(), sims.live(), (System.nanoTime() - start) / 1e9);
        double heapBefore = AuditScaleBenchmark.heapAfterGcMiB(operator.pid());

        Releases releases = new Releases();
        try (Watch ignored = client.resources(IPAddress.class).inAnyNamespace().watch(releases)) {
          Map<String, Double> requestsBefore =
              ApiServerMetrics.sumBy(client, "apiserver_request_total", "verb");
          double auditsBefore = operator.metric("kipam_audit_duration_seconds_count");
          double auditSecondsBefore = operator.metric("kipam_audit_duration_seconds_sum");
          AtomicBoolean churning = new AtomicBoolean(true);
          Thread churn =
              new Thread(
                  () -> {
                    while (churning.get()) {
                      try {
                        sims.churnOnce(perNode);
                        Thread.sleep(20); // about 50 ADD+DEL pairs a second on the rest
                      } catch (InterruptedException e) {
                        return;
                      } catch (RuntimeException e) {
                        // an overloaded API server: the next one tries again
                      }
                    }
                  },
                  "churn");
          churn.start();
          long windowStart = System.nanoTime();
          int rounds = Math.max(1, turnover / 10);
          long roundNanos = Duration.ofMinutes(minutes).toNanos() / rounds;
          int vanished = 0;
          for (int round = 0; round < rounds; round++) {
            long due = windowStart + round * roundNanos;
            while (System.nanoTime() < due) {
              Thread.sleep(100);
            }
            int count = Math.min(10, turnover - vanished);
            for (SimulatedNodes.Vanished gone : sims.vanish(count)) {
              releases.expect(gone, sims);
              vanished++;
            }
            sims.growTo(sims.size() + count, 4);
          }
          while (System.nanoTime() < windowStart + Duration.ofMinutes(minutes).toNanos()) {
            Thread.sleep(100);
          }
          double window = (System.nanoTime() - windowStart) / 1e9;
          Map<String, Double> requestsAfter =
              ApiServerMetrics.sumBy(client, "apiserver_request_total", "verb");
          churning.set(false);
          churn.join();

          // What is still held comes back within the grace, an audit interval and the writes.
          Duration wait = grace.plus(auditEvery.multipliedBy(2)).plus(Duration.ofMinutes(5));
          long deadline = System.nanoTime() + wait.toNanos();
          while (releases.pending() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1000);
          }
          double audits = operator.metric("kipam_audit_duration_seconds_count") - auditsBefore;
          double auditSeconds =
              operator.metric("kipam_audit_duration_seconds_sum") - auditSecondsBefore;
          double heapAfter = AuditScaleBenchmark.heapAfterGcMiB(operator.pid());
          List<String> rows = new ArrayList<>();
          rows.add(
              String.format(
                  "  %d Nodes vanished with %d addresses, %d joined, in %.0f s; %d addresses of"
                      + " vanished Nodes back: from the Node's deletion p50 %.0f s, p99 %.0f s,"
                      + " max %.0f s; %d not back within %d s",
                  vanished,
                  releases.expected(),
                  vanished,
                  window,
                  releases.seconds().size(),
                  percentile(releases.seconds(), 50),
                  percentile(releases.seconds(), 99),
                  percentile(releases.seconds(), 100),
                  releases.pending(),
                  wait.toSeconds()));
          rows.add(
              String.format(
                  "  audit passes: %.0f, %.1f s each on average; duplicates reported %.0f",
                  audits,
                  audits == 0 ? Double.NaN : auditSeconds / audits,
                  operator.metric("kipam_audit_duplicates")));
          Map<String, String> rates = new TreeMap<>();
          requestsAfter.forEach(
              (verb, n) ->
                  rates.put(
                      verb,
                      String.format(
                          "%.1f", (n - requestsBefore.getOrDefault(verb, 0.0)) / window)));
          rows.add("  kube-apiserver requests per second over the window, by verb: " + rates);
          rows.add(
              String.format(
                  "  kipam-operator heap after full GC %.1f MiB before the window, %.1f MiB after"
                      + " (%+.1f%%); kube-apiserver %.0f MiB, etcd %.0f MiB RSS",
                  heapBefore,
                  heapAfter,
                  (heapAfter - heapBefore) * 100 / heapBefore,
                  AuditScaleBenchmark.rssMiB(controlPlane, "kube-apiserver"),
                  AuditScaleBenchmark.rssMiB(controlPlane, "etcd")));
          ApiServerMetrics.report("node-churn.txt", rows);
          assertThat(rows).hasSize(4);
        }
      }
    }
  }

  private static double percentile(List<Double> values, int p) {
    return values.isEmpty() ? Double.NaN : Percentiles.of(values, p);
  }

  /**
   * The addresses of vanished Nodes, and how long after its Node's deletion each IPAddress went,
   * from a watch of every IPAddress's deletion.
   */
  private static final class Releases implements Watcher<IPAddress> {
    private final Map<String, Long> pending = new ConcurrentHashMap<>();
    private final List<Double> seconds = java.util.Collections.synchronizedList(new ArrayList<>());
    private int expected;

    /** {@code gone}'s addresses, from now on counted until each IPAddress is deleted. */
    void expect(SimulatedNodes.Vanished gone, SimulatedNodes sims) {
      long now = System.nanoTime();
      for (IpAddress ip : gone.held()) {
        pending.put(sims.namespaceFor(ip) + "/" + ip, now);
      }
      expected += gone.held().size();
    }

    @Override
    public void eventReceived(Action action, IPAddress address) {
      if (action != Action.DELETED) {
        return;
      }
      Long since =
          pending.remove(address.getMetadata().getNamespace() + "/" + address.getSpec().getIp());
      if (since != null) {
        seconds.add((System.nanoTime() - since) / 1e9);
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      System.out.println("  the watch of IPAddresses closed: " + cause);
    }

    int pending() {
      return pending.size();
    }

    int expected() {
      return expected;
    }

    List<Double> seconds() {
      return List.copyOf(seconds);
    }
  }
}
