package io.kipam.operator.block;

import static io.kipam.operator.block.Slots.LAYOUT;
import static io.kipam.operator.block.Slots.block;
import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.BlockShare;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotConversionTest {

  private static IPBlock subClaim(String ip, String node, IPBlock parent) {
    IPBlock sub = block(ip + "/32", node, 1);
    sub.getSpec().setParent(parent.getMetadata().getName());
    return sub;
  }

  private static void ask(IPBlock slot) {
    BlockShare share = new BlockShare();
    share.setRequestedAt("2026-01-01T00:00:00Z");
    slot.getStatus().setShare(share);
  }

  @Test
  void aNodeHoldingNoSlotIsShortAndGetsTheSlotWithTheMostFreeAddresses() {
    IPBlock mostFree = block("10.0.0.32/28", "c", 2);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 5),
            block("10.0.0.16/28", "b", 10),
            mostFree,
            block("10.0.0.48/28", "d", 6));

    assertThat(SlotConversion.candidateFor("e", LAYOUT, blocks)).contains(mostFree);
  }

  @Test
  void anUnansweredRequestHoldsThePoolUpOnlyForTheAnswerWait() {
    IPBlock asked = block("10.0.0.32/28", "c", 2);
    ask(asked); // at 2026-01-01T00:00:00Z; its holder never answers
    IPBlock next = block("10.0.0.48/28", "d", 6);
    List<IPBlock> blocks =
        List.of(block("10.0.0.0/28", "a", 15), block("10.0.0.16/28", "b", 10), asked, next);
    java.time.Instant at = java.time.Instant.parse("2026-01-01T00:00:00Z");

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks, at.plusSeconds(5))).isEmpty();
    assertThat(
            SlotConversion.candidateFor(
                "a", LAYOUT, blocks, at.plus(SlotConversion.ANSWER_WAIT).plusSeconds(1)))
        .as("the next slot, never the one asked already")
        .contains(next);
  }

  @Test
  void aShortNodeGetsTheExclusiveSlotWithTheMostFreeAddressesConverted() {
    IPBlock mostFree = block("10.0.0.32/28", "c", 2);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "b", 10),
            mostFree,
            block("10.0.0.48/28", "d", 6));

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).contains(mostFree);
  }

  @Test
  void aPoolWithAnUnclaimedSlotNeverConverts() {
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "b", 2),
            block("10.0.0.32/28", "c", 2));

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void aPoolWithAnIdleDonorNeverConverts() {
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "b", 2),
            block("10.0.0.32/28", "c", 2),
            block("10.0.0.48/28", "d", 0));

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void aNodeWithAFreeAddressInItsSlotsIsNotShort() {
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 14),
            block("10.0.0.16/28", "b", 2),
            block("10.0.0.32/28", "c", 2),
            block("10.0.0.48/28", "d", 2));

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void slotsTurnSharedOneAtATimeAndOnlyWhenTheSharedOnesAreUsedUp() {
    IPBlock asked = block("10.0.0.16/28", "b", 2);
    ask(asked);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            asked,
            block("10.0.0.32/28", "c", 2),
            block("10.0.0.48/28", "d", 2));
    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();

    asked.getStatus().setMode(BlockMode.Shared);
    List<IPBlock> withSubClaims = new ArrayList<>(blocks);
    withSubClaims.add(subClaim("10.0.0.17", "a", asked));
    assertThat(SlotConversion.candidateFor("a", LAYOUT, withSubClaims))
        .as("the Shared slot still has free addresses")
        .isEmpty();

    for (int i = 18; i < 32; i++) {
      withSubClaims.add(subClaim("10.0.0." + i, "e", asked));
    }
    withSubClaims.add(subClaim("10.0.0.16", "b", asked));
    assertThat(SlotConversion.candidateFor("e", LAYOUT, withSubClaims))
        .as("a node that holds no slot but sub-claims is short once the Shared slot is used up")
        .map(b -> b.getMetadata().getName())
        .contains("p.10.0.0.32/28");
  }

  @Test
  void aSlotInAnOpenReleaseRoundIsNotAsked() {
    IPBlock inRound = block("10.0.0.16/28", "b", 2);
    BlockRelease release = new BlockRelease();
    release.setState(ReleaseState.Requested);
    inRound.getStatus().setRelease(release);
    IPBlock last = block("10.0.0.48/28", "d", 12);
    List<IPBlock> blocks =
        List.of(block("10.0.0.0/28", "a", 15), inRound, block("10.0.0.32/28", "c", 15), last);

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).contains(last);
  }

  /**
   * A round its holder refused stays on the slot until the operator clears it, and the slot is in
   * use meanwhile: it may be asked, or a short node would wait for the clear.
   */
  @Test
  void aSlotWhoseHolderRefusedARoundMayBeAsked() {
    IPBlock refused = block("10.0.0.16/28", "b", 2);
    BlockRelease release = new BlockRelease();
    release.setState(ReleaseState.Refused);
    refused.getStatus().setRelease(release);
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            refused,
            block("10.0.0.32/28", "c", 15),
            block("10.0.0.48/28", "d", 12));

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).contains(refused);
  }

  @Test
  void aSlotBeingDeletedCountsAsUnclaimedSoNothingConverts() {
    IPBlock deleting = block("10.0.0.32/28", "c", 1);
    deleting.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
    List<IPBlock> blocks =
        List.of(
            block("10.0.0.0/28", "a", 15),
            block("10.0.0.16/28", "b", 2),
            deleting,
            block("10.0.0.48/28", "d", 2));

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void aConvertedSlotIsNeverAskedAgain() {
    IPBlock converted = block("10.0.0.16/28", "b", 0);
    ask(converted);
    converted.getStatus().setMode(BlockMode.Shared);
    List<IPBlock> blocks = new ArrayList<>();
    blocks.add(block("10.0.0.0/28", "a", 15));
    blocks.add(converted);
    blocks.add(block("10.0.0.32/28", "c", 16));
    blocks.add(block("10.0.0.48/28", "d", 15));
    for (int i = 16; i < 32; i++) {
      blocks.add(subClaim("10.0.0." + i, "a", converted));
    }

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }
}
