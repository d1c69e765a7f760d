package io.kipam.operator.block;

import static io.kipam.operator.block.Slots.LAYOUT;
import static io.kipam.operator.block.Slots.inRound;
import static io.kipam.operator.block.Slots.slots;
import static io.kipam.operator.block.Slots.subClaim;
import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.BlockShare;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SlotConversionTest {

  private static void ask(IPBlock slot) {
    BlockShare share = new BlockShare();
    share.setRequestedAt("2026-01-01T00:00:00Z");
    slot.getStatus().setShare(share);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a node holding no slot is short, e, a:5 b:10 c:2 d:6",
    "a short node gets the exclusive slot converted, a, a:15 b:10 c:2 d:6"
  })
  void theShortNodeGetsTheSlotWithTheMostFreeAddresses(
      String description, String node, String holdings) {
    List<IPBlock> blocks = slots(holdings);
    IPBlock mostFree = blocks.get(2);

    assertThat(SlotConversion.candidateFor(node, LAYOUT, blocks)).contains(mostFree);
  }

  @Test
  void anUnansweredRequestHoldsThePoolUpOnlyForTheAnswerWait() {
    List<IPBlock> blocks = slots("a:15 b:10 c:2 d:6");
    IPBlock asked = blocks.get(2);
    ask(asked); // at 2026-01-01T00:00:00Z; its holder never answers
    IPBlock next = blocks.get(3);
    java.time.Instant at = java.time.Instant.parse("2026-01-01T00:00:00Z");

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks, at.plusSeconds(5))).isEmpty();
    assertThat(
            SlotConversion.candidateFor(
                "a", LAYOUT, blocks, at.plus(SlotConversion.ANSWER_WAIT).plusSeconds(1)))
        .as("the next slot, never the one asked already")
        .contains(next);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a pool with an unclaimed slot never converts, a:15 b:2 c:2",
    "a pool with an idle donor never converts, a:15 b:2 c:2 d:0",
    "a node with a free address in its slots is not short, a:14 b:2 c:2 d:2"
  })
  void nothingConverts(String description, String holdings) {
    assertThat(SlotConversion.candidateFor("a", LAYOUT, slots(holdings))).isEmpty();
  }

  @Test
  void slotsTurnSharedOneAtATimeAndOnlyWhenTheSharedOnesAreUsedUp() {
    List<IPBlock> blocks = slots("a:15 b:2 c:2 d:2");
    IPBlock asked = blocks.get(1);
    ask(asked);
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
    List<IPBlock> blocks = slots("a:15 b:2 c:15 d:12");
    inRound(blocks.get(1), ReleaseState.Requested);
    IPBlock last = blocks.get(3);

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).contains(last);
  }

  /**
   * A round its holder refused stays on the slot until the operator clears it, and the slot is in
   * use meanwhile: it may be asked, or a short node would wait for the clear.
   */
  @Test
  void aSlotWhoseHolderRefusedARoundMayBeAsked() {
    List<IPBlock> blocks = slots("a:15 b:2 c:15 d:12");
    IPBlock refused = inRound(blocks.get(1), ReleaseState.Refused);

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).contains(refused);
  }

  @Test
  void aSlotBeingDeletedCountsAsUnclaimedSoNothingConverts() {
    List<IPBlock> blocks = slots("a:15 b:2 c:1 d:2");
    IPBlock deleting = blocks.get(2);
    deleting.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }

  @Test
  void aConvertedSlotIsNeverAskedAgain() {
    List<IPBlock> blocks = slots("a:15 b:0 c:16 d:15");
    IPBlock converted = blocks.get(1);
    ask(converted);
    converted.getStatus().setMode(BlockMode.Shared);
    for (int i = 16; i < 32; i++) {
      blocks.add(subClaim("10.0.0." + i, "a", converted));
    }

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks)).isEmpty();
  }

  @ParameterizedTest(name = "slot {0} is claimed and counted after the full node''s")
  @CsvSource({"1", "2", "3"})
  void aFullNodeWaitsForTheCountOfASlotJustClaimedAndThenGetsItsConversion(int late) {
    java.time.Instant now = java.time.Instant.parse("2026-01-01T00:00:00Z");
    // Every slot full but the one claimed a moment ago, which carries no count yet.
    List<IPBlock> blocks = slots("a:15 b:16 c:16 d:15");
    IPBlock claimed = blocks.get(late);
    claimed.getStatus().setAllocated(null);
    claimed.getMetadata().setCreationTimestamp(now.minusSeconds(2).toString());

    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks, now)).isEmpty();
    assertThat(SlotConversion.awaitingCount("a", LAYOUT, blocks, now))
        .as("look again: the slot's count decides")
        .isTrue();
    assertThat(
            SlotConversion.awaitingCount(
                "a", LAYOUT, blocks, now.plus(SlotConversion.ANSWER_WAIT).plusSeconds(3)))
        .as("a slot that never reports holds no look for longer than the answer wait")
        .isFalse();

    claimed.getStatus().setAllocated(3L);
    assertThat(SlotConversion.awaitingCount("a", LAYOUT, blocks, now)).isFalse();
    assertThat(SlotConversion.candidateFor("a", LAYOUT, blocks, now)).contains(claimed);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a node with a free address waits for nothing, a:14 b:3 c:2 d:2",
    "a pool with an unclaimed slot waits for nothing, a:15 b:3 c:2"
  })
  void nothingWaitsForACountThatCouldDecideNothing(String description, String holdings) {
    List<IPBlock> blocks = slots(holdings);
    blocks.get(1).getStatus().setAllocated(null);

    assertThat(SlotConversion.awaitingCount("a", LAYOUT, blocks, java.time.Instant.now()))
        .isFalse();
  }
}
