package io.kipam.operator.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.BlockShare;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PoolCountTest {

  /** Three /28 slots of 16 addresses each: a pool of 48, as in the measured false "exhausted". */
  private static final PoolLayout LAYOUT =
      PoolLayout.builder()
          .cidr("10.0.0.0/24")
          .rangeStart("10.0.0.16")
          .rangeEnd("10.0.0.63")
          .blockSize(28)
          .build();

  private static final String SLOT = "10.0.0.16/28";

  private static IPBlock block(String cidr, String node, Long allocated) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("p." + cidr).build());
    block.setSpec(new IPBlockSpec("p", cidr, node));
    IPBlockStatus status = new IPBlockStatus();
    status.setAllocated(allocated);
    block.setStatus(status);
    return block;
  }

  /**
   * One slot of node a in {@code state} reporting {@code own} addresses, with {@code subClaims}
   * sub-claims under it each reporting one.
   */
  private static List<IPBlock> slot(String state, Long own, int subClaims) {
    IPBlock slot = block(SLOT, state.equals("born-shared") ? null : "a", own);
    if (!state.equals("exclusive")) {
      BlockShare share = new BlockShare();
      share.setRequestedAt("2026-01-01T00:00:00.000Z");
      slot.getStatus().setShare(state.equals("born-shared") ? null : share);
    }
    if (state.equals("shared")) {
      slot.getStatus().setMode(BlockMode.Shared);
    }
    List<IPBlock> blocks = new ArrayList<>(List.of(slot));
    for (int i = 0; i < subClaims; i++) {
      IPBlock sub = block("10.0.0." + (16 + i) + "/32", i % 2 == 0 ? "a" : "b", 1L);
      sub.getSpec().setParent(slot.getMetadata().getName());
      blocks.add(sub);
    }
    return blocks;
  }

  @ParameterizedTest(name = "{0} slot, own count {1}, {2} sub-claims: {3}")
  @CsvSource({
    "exclusive,    5,  0,  5",
    "exclusive,     ,  0,  0",
    // A chosen address in the holder's own slot: a sub-claim the holder's count leaves out.
    "exclusive,   10,  1, 11",
    // Converting: the holder has sub-claimed some of its 10 addresses, its count not rewritten.
    "converting,  10,  4, 10",
    "converting,  10, 10, 10",
    // ...and its count rewritten (0) before the sub-claims' counts arrive: never more than held.
    "converting,   0,  6,  6",
    // Shared: the slot's own count is stale (the last the holder wrote) and not read.
    "shared,      10, 10, 10",
    "shared,      10,  6,  6",
    "shared,        ,  3,  3",
    "born-shared,  0,  3,  3",
    // Counts that disagree with the slot's size never make it hold more than its 16 addresses.
    "exclusive,   16,  5, 16",
  })
  void aSlotsAddressesAreCountedOnce(String state, Long own, int subClaims, long expected) {
    assertThat(PoolCount.allocated(slot(state, own, subClaims), Optional.of(LAYOUT)))
        .isEqualTo(expected);
  }

  @Test
  void aFullPoolInConversionCountsItsCapacity() {
    // The measured case: 48 addresses in three slots, all held; one slot turning Shared.
    List<IPBlock> blocks = new ArrayList<>(slot("converting", 16L, 5));
    blocks.add(block("10.0.0.32/28", "b", 16L));
    blocks.add(block("10.0.0.48/28", "c", 16L));

    long allocated = PoolCount.allocated(blocks, Optional.of(LAYOUT));

    assertThat(allocated).isEqualTo(48).isLessThanOrEqualTo(LAYOUT.assignableCount().longValue());
  }

  @Test
  void aSubClaimWhoseSlotIsNotCachedCountsOnItsOwn() {
    List<IPBlock> blocks = slot("shared", 0L, 2);
    blocks.remove(0);

    assertThat(PoolCount.allocated(blocks, Optional.of(LAYOUT))).isEqualTo(2);
  }
}
