package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The blocks side of the ledger, and how it reads the address book under the same monitor. */
class LedgerBlocksTest {

  private static final PoolView POOL =
      new PoolView(
          "p", PoolLayout.builder().cidr("10.0.0.0/28").blockSize(29).build(), Duration.ZERO, 0);
  private static final BlockRef FIRST = new BlockRef("p", Cidr.parse("10.0.0.0/29"), "uid-first");

  private final Ledger ledger =
      new Ledger("node-a", Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));
  private final LedgerBlocks blocks = ledger.blocks();

  @Test
  void aClaimedBlockIsThisNodesAndNoLongerACandidate() {
    assertThat(blocks.unclaimedCount(POOL, 10)).isEqualTo(2);

    blocks.blockClaimed(FIRST);

    assertThat(blocks.ownBlocks("p")).containsExactly(FIRST.cidr());
    assertThat(blocks.taken("p", FIRST.cidr())).isTrue();
    assertThat(blocks.unclaimedCount(POOL, 10)).isEqualTo(1);
    assertThat(blocks.unclaimedBlocks(POOL, new Random(1), 10))
        .containsExactly(Cidr.parse("10.0.0.8/29"));
  }

  @Test
  void aBlockClaimedByAnAddInFlightIsNotReportedUntilThatAddIsDone() {
    blocks.blockClaimed(FIRST);

    // Between the claim and the reservation of its address the block would count 0, and
    // kipam-operator would take a reported 0 for an empty block and ask for it.
    assertThat(blocks.blockUsage()).noneMatch(u -> u.block().ref().equals(FIRST));

    Ledger.Pick pick = ledger.reserveFree(POOL, new Random(1)).orElseThrow();
    assertThat(pick.block()).isEqualTo(FIRST.cidr());
    blocks.claimsSettled(List.of(FIRST));

    assertThat(blocks.blockUsage())
        .filteredOn(u -> u.block().ref().equals(FIRST))
        .singleElement()
        .satisfies(u -> assertThat(u.allocated()).isOne());
  }

  @Test
  void aBlockWithAnAddressReservedInTheAddressBookIsNotRetired() {
    blocks.blockClaimed(FIRST);
    Ledger.Pick pick = ledger.reserveFree(POOL, new Random(1)).orElseThrow();
    assertThat(pick.block()).isEqualTo(FIRST.cidr());

    assertThat(blocks.retireIfEmpty(FIRST)).as("an allocation is writing into it").isFalse();

    ledger.unreserve(new AddressKey("p", pick.ip()));
    assertThat(blocks.retireIfEmpty(FIRST)).isTrue();
    assertThat(ledger.reserveFree(POOL, new Random(1)))
        .as("a retired block offers nothing")
        .isEmpty();
  }

  @Test
  void nothingIsGivenBackOrConvertedBeforeTheLedgerHasSynced() {
    blocks.blockClaimed(FIRST);
    blocks.slotSeen("p", Cidr.parse("10.0.0.8/29"), "uid-other", true, false);

    assertThat(blocks.blocksToDelete()).isEmpty();
    assertThat(blocks.pendingConversions()).isEmpty();
    assertThat(blocks.retireIdleHostBlock("p", FIRST.cidr())).isEmpty();
  }

  @Test
  void aGoneBlockIsForgottenOnBothSides() {
    blocks.blockClaimed(FIRST);
    blocks.blockGone(FIRST);

    assertThat(blocks.ownBlocks("p")).isEmpty();
    assertThat(blocks.blockUsage()).isEmpty();
  }
}
