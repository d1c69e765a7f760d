package io.kipam.operator.block;

import static io.kipam.operator.block.Slots.LAYOUT;
import static io.kipam.operator.block.Slots.block;
import static io.kipam.operator.block.Slots.inRound;
import static io.kipam.operator.block.Slots.slots;
import static io.kipam.operator.block.Slots.subClaim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PoolPressureTest {

  @Test
  void aNodeHoldingNoBlockIsShortOnlyThroughItsDemand() {
    List<IPBlock> blocks = slots("a:15 a:16 b:3 b:0");
    IPBlock empty = blocks.get(3);

    assertThat(PoolPressure.donorFor("c", LAYOUT, blocks)).isEmpty();
    assertThat(PoolPressure.donorFor("c", LAYOUT, blocks, true)).contains(empty);
  }

  @Test
  void aFullNodeGetsAnotherNodesEmptyBlockWhenNoBlockIsLeftToClaim() {
    List<IPBlock> blocks = slots("a:15 a:16 b:3 b:0");
    IPBlock empty = blocks.get(3);

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).contains(empty);
  }

  @Test
  void aSharedSlotIsNoDonorAndItsSubClaimsClaimNoSlot() {
    List<IPBlock> blocks = slots("a:15 a:16 b:0");
    IPBlock converted = blocks.get(2);
    converted.getStatus().setMode(BlockMode.Shared);
    IPBlock shared = block("10.0.0.48/28", null, 0);
    shared.getStatus().setMode(BlockMode.Shared);
    blocks.add(shared);
    blocks.add(subClaim("10.0.0.50", "b", shared));

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void subClaimsDoNotHideAnUnclaimedSlot() {
    List<IPBlock> blocks = slots("a:15 b:0");
    IPBlock unclaimed = block("10.0.0.48/28", null, 0);
    blocks.add(subClaim("10.0.0.50", "b", unclaimed));

    assertThat(PoolPressure.donorFor("a", LAYOUT, blocks)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "nothing moves while a block is left to claim, a:15 b:0 b:0",
    "nothing moves while the node has a free address, a:15 a:15 b:0 b:0"
  })
  void nothingMoves(String description, String holdings) {
    assertThat(PoolPressure.donorFor("a", LAYOUT, slots(holdings))).isEmpty();
  }

  @Test
  void aBlockInUseOrAlreadyInARoundIsNotAskedFor() {
    List<IPBlock> blocks = slots("a:15 a:16 b:1 c:0");
    inRound(blocks.get(3), ReleaseState.Refused);

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
