package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Deleting a pool: {@code kipam.io/pool-protection} keeps it, Terminating and with its blocks,
 * while any of its IPAddresses exists (in any namespace); then its blocks and the pool go.
 *
 * <p>Why the daemon is played: this module tests the operator alone, and each test needs one exact
 * report or answer of a node daemon (a count, a {@code Ready} for a given round) at one exact
 * moment, which {@code reportAllocated} and {@code answer} write as the daemon writes them. With
 * real kipam-node processes, {@code BlockLifecycleIT} in the node module deletes pools.
 */
@WithControlPlane
class PoolDeletionWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);

  @RegisterExtension
  static final OperatorPerClass cluster = OperatorPerClass.withSettings(Map.of()).andNodes("node");

  private final KubernetesClient client = cluster.client();
  private final Kipam kipam = new Kipam(client);
  private final String node = cluster.node();

  @Test
  void aDeletedPoolWithAnAddressStaysTerminatingWithItsBlocksUntilTheAddressGoes() {
    String name = Fixtures.uniqueName("doomed");
    IPPool pool = kipam.checkedPool(name, "10.50.0.0/24", WITHIN);
    IPBlock used = kipam.claimBlock(pool, "10.50.0.0/28", node);
    IPBlock empty = kipam.claimBlock(pool, "10.50.0.16/28", node);
    String namespace = Fixtures.namespace(client, "pool-del");
    IPAddress address = kipam.allocate(namespace, used, "10.50.0.5");
    kipam.reportAllocated(used.getMetadata().getName(), 1);

    client.resources(IPPool.class).withName(name).delete();

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              assertThat(kipam.conditionOf(name, "Terminating")).isEqualTo("True/Deleting");
              assertThat(kipam.conditionOf(name, "Ready")).isEqualTo("False/Terminating");
              assertThat(kipam.requiredCondition(name, "Terminating").getMessage())
                  .contains(namespace + "/" + address.getMetadata().getName());
            });
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(kipam.pool(name)).isNotNull();
              assertThat(kipam.block(used.getMetadata().getName())).isNotNull();
              assertThat(kipam.block(empty.getMetadata().getName())).isNotNull();
            });

    kipam.delete(address);
    kipam.reportAllocated(used.getMetadata().getName(), 0);
    // Their node gives both blocks back when asked, as the pool's blocks now are.
    answeredThenGone(name, used, empty);
    assertThat(kipam.eventReasons(name)).contains("Terminating", "Deleted");
  }

  @Test
  void aDeletedPoolWithoutAddressesGoesWithItsBlocks() {
    String name = Fixtures.uniqueName("unused");
    IPPool pool = kipam.checkedPool(name, "10.51.0.0/24", WITHIN);
    IPBlock block = kipam.claimBlock(pool, "10.51.0.32/28", node);

    client.resources(IPPool.class).withName(name).delete();
    answeredThenGone(name, block);
  }

  /**
   * The node answers Ready when each of {@code blocks} is asked back; then the blocks, in order,
   * and the pool {@code name} are gone.
   */
  private void answeredThenGone(String name, IPBlock... blocks) {
    for (IPBlock block : blocks) {
      kipam.answerWhenAsked(block.getMetadata().getName(), ReleaseState.Ready, WITHIN);
    }
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              for (IPBlock block : blocks) {
                assertThat(kipam.block(block.getMetadata().getName())).isNull();
              }
              assertThat(kipam.pool(name)).isNull();
            });
  }
}
