package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A pool sized to the last address: when one node's blocks are full and no block is left to claim,
 * an empty block of another node is asked for at once, not after the idle delay (an hour here).
 *
 * <p>Why the daemon is played: this module tests the operator alone, and each test needs one exact
 * report or answer of a node daemon (a count, a {@code Ready} for a given round) at one exact
 * moment, which {@code reportAllocated} and {@code answer} write as the daemon writes them. With
 * real kipam-node processes, {@code PoolStatusAndPressureIT} in the node module shows the move.
 */
@WithControlPlane
class PoolPressureWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static RunningOperator operator;
  private static String nodeA;
  private static String nodeB;

  private final Kipam kipam;

  PoolPressureWithPlayedDaemonIT(KubernetesClient client) {
    this.kipam = new Kipam(client);
  }

  @BeforeAll
  static void startOperator(ControlPlane controlPlane, KubernetesClient client) throws Exception {
    KipamCrds.install(client);
    nodeA = Fixtures.uniqueName("node-a");
    nodeB = Fixtures.uniqueName("node-b");
    Fixtures.registerNode(client, nodeA);
    Fixtures.registerNode(client, nodeB);
    operator = RunningOperator.start(controlPlane, Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"));
  }

  @AfterAll
  static void stopOperator() {
    if (operator != null) {
      operator.close();
    }
  }

  private IPPool poolCheckedByOperator(String cidr) {
    String name = Fixtures.uniqueName("short");
    kipam.createPool(name, cidr, 28, Fixtures.uniqueName("net"));
    await().atMost(WITHIN).until(() -> kipam.conditionOf(name, "Ready").equals("True/Checked"));
    return kipam.pool(name);
  }

  private BlockRelease release(IPBlock block) {
    IPBlock current = kipam.block(block.getMetadata().getName());
    return current == null || current.getStatus() == null ? null : current.getStatus().getRelease();
  }

  @Test
  void aFullNodeGetsTheEmptyBlockOfAnotherNodeWhenNoBlockIsLeft() {
    IPPool pool = poolCheckedByOperator("10.62.0.0/27");
    IPBlock idle = kipam.claimBlock(pool, "10.62.0.16/28", nodeB);
    kipam.reportAllocated(idle.getMetadata().getName(), 0);
    IPBlock full = kipam.claimBlock(pool, "10.62.0.0/28", nodeA);

    kipam.reportAllocated(full.getMetadata().getName(), 15);

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              BlockRelease release = release(idle);
              assertThat(release).isNotNull();
              assertThat(release.getState()).isEqualTo(ReleaseState.Requested);
              assertThat(release.getReason()).contains("short").contains(nodeA);
            });
    assertThat(release(full)).as("the full block is not asked for").isNull();

    kipam.answer(idle.getMetadata().getName(), ReleaseState.Ready, "empty");
    await().atMost(WITHIN).until(() -> kipam.block(idle.getMetadata().getName()) == null);
  }

  @Test
  void nothingMovesWhileABlockIsLeftToClaim() {
    IPPool pool = poolCheckedByOperator("10.63.0.0/26");
    IPBlock idle = kipam.claimBlock(pool, "10.63.0.16/28", nodeB);
    kipam.reportAllocated(idle.getMetadata().getName(), 0);
    IPBlock full = kipam.claimBlock(pool, "10.63.0.0/28", nodeA);

    kipam.reportAllocated(full.getMetadata().getName(), 15);

    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .until(() -> release(idle) == null);
  }
}
