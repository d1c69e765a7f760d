package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A dual-stack pod network whose IPv6 side is sized exactly: a roomy IPv4 pool and an IPv6 pool of
 * four small slots, used by six nodes (more nodes than slots, so the IPv6 slots are claimed Shared
 * from birth and every IPv6 address is reachable from every node). More pods than IPv6 addresses
 * ask for both families at once: each pod gets both or none, and a pod that got none holds no IPv4
 * address either. Real kipam-operator and kipam-node processes; pods in three namespaces.
 */
class DualStackSharedSlotsIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final int NODES = 6;
  private static final int PODS_PER_NODE = 4;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("dual");

  private static String podOf(IPAddress a) {
    return a.getMetadata().getNamespace() + "/" + a.getSpec().getPod().getName();
  }

  @Test
  void everyPodGetsBothFamiliesOrNoneWhenTheIpv6PoolIsExact() throws Exception {
    processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    String v4 = Fixtures.uniqueName("dual4");
    String v6 = Fixtures.uniqueName("dual6");
    Cluster.poolReadiedByOperator(client, v4, Cluster.spec("10.205.0.0/24", 28, 0));
    Cluster.poolReadiedByOperator(client, v6, Cluster.spec("fd00:205::/124", 126, 0));
    int capacity =
        Integer.parseInt(
            client.resources(IPPool.class).withName(v6).get().getStatus().getCapacity());
    List<NodeRig> nodes = processes.nodes(v4, NODES, Map.of("KIPAM_SHARED_SLOTS", "true"));
    assertThat(NODES * PODS_PER_NODE).as("more pods than IPv6 addresses").isGreaterThan(capacity);

    ExecutorService callers = Executors.newFixedThreadPool(NODES);
    List<Future<List<CniCall.Outcome>>> perNode = new ArrayList<>();
    try {
      for (NodeRig node : nodes) {
        perNode.add(
            callers.submit(
                () -> {
                  List<CniCall.Outcome> outcomes = new ArrayList<>();
                  for (int i = 0; i < PODS_PER_NODE; i++) {
                    outcomes.add(node.addRetried(List.of(v4, v6), i, Duration.ofSeconds(15)));
                  }
                  return outcomes;
                }));
      }
      int ok = 0;
      for (Future<List<CniCall.Outcome>> f : perNode) {
        for (CniCall.Outcome outcome : f.get()) {
          if (outcome.ok()) {
            ok++;
          } else {
            assertThat(outcome.stdout())
                .as("a refused ADD is 'no address left' or 'try again'")
                .containsAnyOf("\"code\":100,", "\"code\":11,");
          }
        }
      }

      List<IPAddress> held4 = Cluster.addresses(client, v4);
      List<IPAddress> held6 = Cluster.addresses(client, v6);
      System.out.printf(
          "dual stack, exact IPv6 pool: %d of %d pods got both families (IPv6 capacity %d),"
              + " %d IPv4 and %d IPv6 IPAddresses%n",
          ok, NODES * PODS_PER_NODE, capacity, held4.size(), held6.size());
      assertThat(ok).as("every IPv6 address serves a pod").isEqualTo(capacity);
      Set<String> pods4 =
          held4.stream().map(DualStackSharedSlotsIT::podOf).collect(Collectors.toSet());
      Set<String> pods6 =
          held6.stream().map(DualStackSharedSlotsIT::podOf).collect(Collectors.toSet());
      assertThat(pods4).as("pods with an IPv4 address are those with an IPv6 one").isEqualTo(pods6);
      assertThat(held4).hasSize(capacity);
      assertThat(held6).hasSize(capacity);
      assertThat(new HashSet<>(held6.stream().map(a -> a.getSpec().getIp()).toList()))
          .as("no IPv6 address held twice")
          .hasSize(capacity);
      assertThat(held4.stream().map(a -> a.getMetadata().getNamespace()).distinct())
          .as("pods in several namespaces")
          .hasSizeGreaterThan(1);
    } finally {
      callers.shutdownNow();
    }
  }
}
