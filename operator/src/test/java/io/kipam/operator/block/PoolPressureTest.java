package io.kipam.operator.block;

import static io.kipam.operator.block.Slots.LAYOUT;
import static io.kipam.operator.block.Slots.block;
import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolPressureTest {

  @Test
  void aNodeHoldingNoBlockIsShortOnlyThroughItsDemand() {
    IPBlock empty = block("10.0.0.48/28", "b", 0);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "a", 16),
            block("10.0.0.32/28", "b", 3),
            empty);

    assertThat(PoolPressure.donorFor("c", LAYOUT, blocks)).isEmpty();
    assertThat(PoolPressure.donorFor("c", LAYOUT, blocks, true)).contains(empty);
  }

  @Test
  void aFullNodeGetsAnotherNodesEmptyBlockWhenNoBlockIsLeftToClaim() {
    IPBlock empty = block("10.0.0.48/28", "b", 0);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "a", 16),
            block("10.0.0.32/28", "b", 3),
            empty);

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).contains(empty);
  }

  @Test
  void aSharedSlotIsNoDonorAndItsSubClaimsClaimNoSlot() {
    IPBlock shared = block("10.0.0.48/28", null, 0);
    shared.getStatus().setMode(BlockMode.Shared);
    IPBlock converted = block("10.0.0.32/28", "b", 0);
    converted.getStatus().setMode(BlockMode.Shared);
    IPBlock subClaim = block("10.0.0.50/32", "b", 1);
    subClaim.getSpec().setParent(shared.getMetadata().getName());
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "a", 16),
            converted,
            shared,
            subClaim);

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void subClaimsDoNotHideAnUnclaimedSlot() {
    IPBlock subClaim = block("10.0.0.50/32", "b", 1);
    subClaim.getSpec().setParent("p.10.0.0.48/28");
    List<IPBlock> blocks =
        List.of(block("10.0.0.0/28", "a", 15), block("10.0.0.16/28", "b", 0), subClaim);

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void nothingMovesWhileABlockIsLeftToClaim() {
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "b", 0),
            block("10.0.0.32/28", "b", 0));

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void nothingMovesWhileTheNodeHasAFreeAddress() {
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "a", 15),
            block("10.0.0.32/28", "b", 0),
            block("10.0.0.48/28", "b", 0));

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void aBlockInUseOrAlreadyInARoundIsNotAskedFor() {
    IPBlock asked = block("10.0.0.48/28", "c", 0);
    BlockRelease release = new BlockRelease();
    release.setState(ReleaseState.Refused);
    asked.getStatus().setRelease(release);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "a", 16),
            block("10.0.0.32/28", "b", 1),
            asked);

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void aHugePoolIsNeverShortAndCostsOnlyItsClaimedBlocks() {
    PoolLayout v6 = PoolLayout.builder().cidr("fd00::/64").blockSize(128).build();
    IPBlock full = block("fd00::1/128", "a", 1);

    assertThat(PoolPressure.unclaimedBlockLeft(v6, List.of(full))).isTrue();
    assertThat(PoolPressure.donorFor("a", v6, List.of(full, block("fd00::2/128", "b", 0))))
        .isEmpty();
  }
}
