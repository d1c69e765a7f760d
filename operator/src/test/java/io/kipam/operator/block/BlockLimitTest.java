package io.kipam.operator.block;

import static io.kipam.operator.block.Slots.block;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BlockLimitTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static IPPool pool(Integer maxBlocksPerNode) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName("p").build());
    IPPoolSpec spec = new IPPoolSpec();
    spec.setMaxBlocksPerNode(maxBlocksPerNode);
    pool.setSpec(spec);
    return pool;
  }

  @Test
  void aNodeOverItsLimitGivesBackItsEmptyBlocksBeyondItFirstByName() {
    IPBlock full = block("10.0.0.0/28", "a", 15);
    IPBlock empty1 = block("10.0.0.16/28", "a", 0);
    IPBlock empty2 = block("10.0.0.32/28", "a", 0);
    IPBlock other = block("10.0.0.48/28", "b", 0);
    List<IPBlock> blocks = List.of(full, empty1, empty2, other);

    assertThat(BlockLimit.over(full, pool(2), blocks))
        .contains(new BlockLimit.Over("a", "p", 3, 2));
    assertThat(BlockLimit.excess(empty1, pool(2), blocks))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .isEqualTo(
                        "node a holds 3 blocks of pool p, over its spec.maxBlocksPerNode (2): an"
                            + " empty block beyond it is taken back"));
    assertThat(BlockLimit.excess(empty2, pool(2), blocks)).as("one too many").isEmpty();
    assertThat(BlockLimit.excess(full, pool(2), blocks)).as("not empty").isEmpty();
    assertThat(BlockLimit.excess(empty2, pool(1), blocks)).as("two too many").isPresent();
    assertThat(BlockLimit.excess(other, pool(1), blocks)).as("node b is within").isEmpty();
  }

  @Test
  void noLimitOrWithinItTakesNothingBack() {
    List<IPBlock> blocks = List.of(block("10.0.0.0/28", "a", 0), block("10.0.0.16/28", "a", 0));
    for (Integer limit : new Integer[] {null, 0, 2, 3}) {
      assertThat(BlockLimit.over(blocks.get(0), pool(limit), blocks))
          .as("limit %s", limit)
          .isEmpty();
      assertThat(BlockLimit.excess(blocks.get(1), pool(limit), blocks)).isEmpty();
    }
  }

  @Test
  void sharedSlotsSubClaimsUnreportedAndDeletedBlocksAreNotCountedOrTaken() {
    IPBlock kept = block("10.0.0.0/28", "a", 1);
    IPBlock shared = block("10.0.0.16/28", "a", 0);
    shared.getStatus().setMode(BlockMode.Shared);
    IPBlock deleting = block("10.0.0.32/28", "a", 0);
    deleting.getMetadata().setDeletionTimestamp(T0.toString());
    IPBlock unreported = block("10.0.0.48/28", "a", 0);
    unreported.getStatus().setAllocated(null);
    IPBlock inRound = block("10.0.0.64/28", "a", 0);
    BlockRelease release = new BlockRelease();
    release.setState(ReleaseState.Requested);
    inRound.getStatus().setRelease(release);
    List<IPBlock> blocks = List.of(kept, shared, deleting, unreported, inRound);

    assertThat(BlockLimit.over(kept, pool(1), blocks))
        .as("kept, unreported and the one in a round count")
        .map(BlockLimit.Over::held)
        .isEqualTo(Optional.of(3));
    assertThat(BlockLimit.excess(unreported, pool(1), blocks)).as("unknown, not empty").isEmpty();
    assertThat(BlockLimit.excess(inRound, pool(1), blocks)).as("already asked").isEmpty();
    assertThat(BlockLimit.excess(shared, pool(1), blocks)).isEmpty();
  }
}
