package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The audit never takes a live address: pods created and deleted in 5 namespaces on 4 nodes (real
 * kipam-node daemons, ADD and DEL through the installed executable, each pod's DEL before its
 * deletion, as kubelet does), at least 2,000 allocations, while kipam-operator, as its own process,
 * audits every 2 s with a grace of 3 s and pages of 50. No {@code OrphanRemoved} Event is written,
 * and every pod still running at the end holds its address. A control plane of the test's own, so
 * the audit sees no other test's objects.
 */
class AuditChurnIT {

  private static final int NODES = 4;
  private static final int NAMESPACES = 5;
  private static final int ALLOCATIONS = 2000;
  private static final int LIVE_PER_NODE = 20;

  @Test
  void noLiveAddressIsRemovedOverTwoThousandAllocations() throws Exception {
    try (ControlPlane controlPlane = ControlPlane.fresh();
        KipamProcesses processes =
            new KipamProcesses(controlPlane, controlPlane.client(), "churn", NAMESPACES)) {
      KubernetesClient client = controlPlane.client();
      KipamCrds.install(client);
      OperatorProcess operator =
          processes
              .operator()
              .withMetricsPort()
              .startLeading(
                  Map.of(
                      "KIPAM_AUDIT_SECONDS", "2",
                      "KIPAM_ORPHAN_GRACE_SECONDS", "3",
                      "KIPAM_AUDIT_PAGE_SIZE", "50"),
                  Duration.ofSeconds(60));
      String pool = Cluster.readiedPool(client, "churn", Cluster.spec("10.215.0.0/22", 27, 0));
      List<NodeRig> rigs = new ArrayList<>();
      for (int n = 0; n < NODES; n++) {
        rigs.add(processes.node(pool, Map.of("KIPAM_BLOCK_STATUS_SECONDS", "2")));
      }

      long start = System.nanoTime();
      ExecutorService workers = Executors.newFixedThreadPool(NODES);
      List<Future<Set<String>>> stillRunning = new ArrayList<>();
      for (NodeRig rig : rigs) {
        stillRunning.add(
            workers.submit(
                () -> {
                  Set<String> ips = new HashSet<>();
                  List<String> live = new ArrayList<>();
                  for (int i = 0; i < ALLOCATIONS / NODES; i++) {
                    CniCall.Outcome added = rig.add(pool, i);
                    assertThat(added.ok()).as(added.stdout()).isTrue();
                    live.add(added.ip());
                    if (i >= LIVE_PER_NODE) {
                      int old = i - LIVE_PER_NODE;
                      assertThat(rig.del(pool, old).ok()).isTrue();
                      rig.deletePod(old);
                      live.remove(0);
                    }
                  }
                  ips.addAll(live);
                  return ips;
                }));
      }
      Set<String> running = new HashSet<>();
      for (Future<Set<String>> f : stillRunning) {
        running.addAll(f.get());
      }
      workers.shutdown();
      double seconds = (System.nanoTime() - start) / 1e9;

      List<Event> removals = new ArrayList<>();
      for (String namespace : processes.namespaces) {
        client.v1().events().inNamespace(namespace).list().getItems().stream()
            .filter(e -> "OrphanRemoved".equals(e.getReason()))
            .forEach(removals::add);
      }
      long audits = (long) operator.metric("kipam_audit_duration_seconds_count");
      long scanned = (long) operator.metric("kipam_audit_objects_scanned_total");
      long candidates = (long) operator.metric("kipam_audit_orphans_seen_total");
      System.out.printf(
          "audit churn: %d allocations on %d nodes in %d namespaces in %.1f s; %d audits read %d"
              + " IPAddresses, saw %d orphan candidates, removed %d%n",
          ALLOCATIONS, NODES, NAMESPACES, seconds, audits, scanned, candidates, removals.size());
      assertThat(audits).as("audits during the churn").isGreaterThan(10);
      assertThat(removals)
          .as("OrphanRemoved Events: every address here belonged to a live pod when removed")
          .isEmpty();
      List<IPAddress> held = Cluster.addresses(client, pool);
      assertThat(held.stream().map(a -> a.getSpec().getIp()).toList())
          .as("the pods still running hold their addresses, and only they")
          .containsExactlyInAnyOrderElementsOf(running);
    }
  }
}
