package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.system.harness.AddsAtOnce;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.PoolAssertions;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * More nodes than a pool has slots, each served through Shared slots, with real kipam-node
 * processes and kipam-operator: 8 nodes share 62 assignable addresses in four /28 slots.
 *
 * <p>kipam-operator publishes the pool's {@code status.nodes} (every Node of the cluster: the pool
 * has no nodeSelector, so at least these 8), and the daemons run with {@code
 * KIPAM_SHARED_SLOTS=true}. With fewer unclaimed slots than nodes, every slot is claimed Shared
 * from birth and every address is sub-claimed by the node that uses it.
 */
class SharedSlotsIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final Duration RUNTIME_RETRIES = Duration.ofSeconds(60);

  /** Pods per node: 60 of the pool's 62 assignable addresses. */
  private static final int[] PODS = {26, 10, 6, 6, 4, 4, 2, 2};

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = ControlPlane.shared().client();
  private final List<NodeRig> rigs = new ArrayList<>();

  @AfterEach
  void stopAll() throws Exception {
    Close.all(rigs.toArray(AutoCloseable[]::new));
  }

  @Test
  void everyPodOfEightNodesGetsAnAddressOfFourSharedSlotsAndTheSubClaimsGoBack() throws Exception {
    String pool = Cluster.readiedPool(client, "shared", Cluster.spec("10.207.0.0/26", 28, 0));
    Path dir = Files.createTempDirectory("kipam-shared-slots-it");
    List<String> namespaces = NodeRig.namespaces(client, "shared");
    for (int n = 0; n < PODS.length; n++) {
      rigs.add(
          NodeRig.start(
              controlPlane, client, dir, namespaces, pool, Map.of("KIPAM_SHARED_SLOTS", "true")));
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(
                        client.resources(IPPool.class).withName(pool).get().getStatus().getNodes())
                    .as("Nodes the operator counts for the pool")
                    .isGreaterThanOrEqualTo(PODS.length));

    AddsAtOnce.run(
        rigs,
        pool,
        PODS,
        n -> 0,
        RUNTIME_RETRIES,
        outcome -> assertThat(outcome.ok()).as(outcome.stdout()).isTrue());

    List<IPBlock> blocks = PoolAssertions.everyAddressOnceInABlockOfItsNode(client, pool, 60);
    List<IPBlock> slots = blocks.stream().filter(b -> b.getSpec().getParent() == null).toList();
    assertThat(slots).hasSize(4);
    for (IPBlock slot : slots) {
      if (slot.getSpec().getNode() == null) {
        assertThat(slot.getStatus().getMode()).isEqualTo(BlockMode.Shared);
      }
    }

    for (int n = 0; n < PODS.length; n++) {
      for (int i = 0; i < PODS[n]; i++) {
        assertThat(rigs.get(n).del(pool, i).ok()).isTrue();
      }
    }
    PoolAssertions.subClaimsAndAddressesGone(client, pool, RUNTIME_RETRIES);
  }
}
