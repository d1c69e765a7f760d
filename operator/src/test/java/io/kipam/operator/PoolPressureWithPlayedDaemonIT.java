package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kipam.api.v1alpha1.BlockRelease;
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

  @RegisterExtension
  static final OperatorPerClass cluster =
      OperatorPerClass.withSettings(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"))
          .andNodes("node-a", "node-b");

  private final Kipam kipam = new Kipam(cluster.client());
  private final String nodeA = cluster.node(0);
  private final String nodeB = cluster.node(1);

  /** The blocks of nodeA, 15 addresses allocated, and of nodeB, none. */
  private record Held(IPBlock full, IPBlock idle) {}

  /**
   * A checked pool {@code prefix.0/n} whose block {@code prefix.16/28} nodeB holds idle and whose
   * block {@code prefix.0/28} nodeA holds full, claimed in that order.
   */
  private Held fullAndIdle(String prefix, int prefixLength) {
    IPPool pool =
        kipam.checkedPool(Fixtures.uniqueName("short"), prefix + ".0/" + prefixLength, WITHIN);
    IPBlock idle = kipam.claimReported(pool, prefix + ".16/28", nodeB, 0);
    IPBlock full = kipam.claimReported(pool, prefix + ".0/28", nodeA, 15);
    return new Held(full, idle);
  }

  private BlockRelease release(IPBlock block) {
    IPBlock current = kipam.block(block.getMetadata().getName());
    return current == null || current.getStatus() == null ? null : current.getStatus().getRelease();
  }

  @Test
  void aFullNodeGetsTheEmptyBlockOfAnotherNodeWhenNoBlockIsLeft() {
    Held held = fullAndIdle("10.62.0", 27);
    IPBlock idle = held.idle();
    IPBlock full = held.full();

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
    IPBlock idle = fullAndIdle("10.63.0", 26).idle();

    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .until(() -> release(idle) == null);
  }
}
