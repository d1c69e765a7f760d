package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.Cidr;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** How {@link BlockClaims} claims slots, sub-claims Shared addresses and gives blocks back. */
class BlockClaimsTest {

  private final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
  private final FakeStore store = new FakeStore();
  private final Ledger ledger = new Ledger("node-a", clock);
  private final BlockClaims claims = new BlockClaims(ledger, store, new Random(3));

  {
    ledger.markSynced();
  }

  @Test
  void aClaimTakesAnUnclaimedSlotForThisNode() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 30, 0);
    List<BlockRef> claimedHere = new ArrayList<>();

    assertThat(claims.claim(pool, claimedHere, false)).isEqualTo(BlockClaims.Claim.CLAIMED);

    assertThat(claimedHere).hasSize(1);
    assertThat(ledger.blocks().ownBlocks("p")).containsExactly(claimedHere.get(0).cidr());
    assertThat(store.blocks.get(claimedHere.get(0).name()).node()).isEqualTo("node-a");
  }

  @Test
  void noClaimWhenEverySlotIsTaken() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/29", 30, 0);
    for (Cidr block : pool.layout().usableBlocks()) {
      ledger.blocks().blockTaken("p", block);
    }

    assertThat(claims.claim(pool, new ArrayList<>(), false)).isEqualTo(BlockClaims.Claim.NONE);
    assertThat(store.blocks).isEmpty();
  }

  @Test
  void theBlockLimitStopsAClaim() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 30, 0);
    PoolView capped = new PoolView(pool.name(), pool.layout(), pool.reuseDelay(), 1, null, null);
    assertThat(claims.claim(capped, new ArrayList<>(), false)).isEqualTo(BlockClaims.Claim.CLAIMED);

    assertThatThrownBy(() -> claims.claim(capped, new ArrayList<>(), false))
        .isInstanceOf(AllocationException.class)
        .hasMessageContaining("maxBlocksPerNode");
  }

  @Test
  void slotsAreClaimedExclusiveWhileEnoughAreLeftForEveryNode() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 30, 0); // four slots
    assertThat(claims.exclusive(pool)).isTrue(); // number of Nodes unknown
    assertThat(claims.exclusive(pool.withNodes(4))).isTrue();
    assertThat(claims.exclusive(pool.withNodes(5))).isFalse();
  }

  @Test
  void aSharedSlotIsClaimedFromBirthAndItsAddressesSubClaimed() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/29", 29, 0).withNodes(3);
    List<BlockRef> claimedHere = new ArrayList<>();

    assertThat(claims.claim(pool, claimedHere, true)).isEqualTo(BlockClaims.Claim.CLAIMED);
    assertThat(claimedHere).isEmpty(); // a Shared slot is not this node's
    var pick = claims.subClaim(pool, claimedHere);

    assertThat(pick).isPresent();
    assertThat(pick.get().block().prefixLength()).isEqualTo(32);
    assertThat(claimedHere).extracting(BlockRef::cidr).containsExactly(pick.get().block());
    assertThat(ledger.blocks().ownBlocks("p")).containsExactly(pick.get().block());
  }

  @Test
  void anEmptyClaimedBlockGoesBack() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 30, 0);
    List<BlockRef> claimedHere = new ArrayList<>();
    claims.claim(pool, claimedHere, false);

    claims.giveBackIfEmpty(claimedHere.get(0), new RuntimeException("the ADD failed"));

    assertThat(store.blocks).isEmpty();
    assertThat(ledger.blocks().ownBlocks("p")).isEmpty();
  }
}
