package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A node watches none of the other nodes' blocks (design §6): it learns of them from its claims'
 * 409s and from a listing of the pool made only when what it knows leaves an ADD without an
 * address. These tests show that a node with room never lists, that a block or address another node
 * gave back, or a slot that turned Shared, is found by the next listing, and that a pool is refused
 * as exhausted only on a listing at most {@link BlockClaims#RELIST_AFTER} old.
 */
class PoolListingTest {

  @RegisterExtension final NodeFixture fixture = new NodeFixture();
  private final long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
  private final NodeFixture.Node a = fixture.node("node-a", seed);
  private final NodeFixture.Node b = fixture.node("node-b", seed + 1);

  {
    System.out.println("seed " + seed + " (-Dkipam.seed= repeats it)");
  }

  @Test
  void aNodeWhoseBlocksHaveRoomNeverListsThePool() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/24", 26, 0);
    for (int i = 0; i < 60; i++) {
      (i % 2 == 0 ? a : b).add(pool, i);
    }

    assertThat(fixture.store.listings.get()).isZero();
  }

  @Test
  void anAddressAnotherNodeGaveBackIsClaimedAfterAFreshListing() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/29", 32, 0); // six /32 blocks
    List<Lease> ofB = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ofB.add(b.add(pool, i));
    }
    a.add(pool, 5);
    assertThatThrownBy(() -> a.add(pool, 100)).isInstanceOf(AllocationException.class);
    int given = new Random(seed).nextInt(ofB.size());
    b.del(pool, given); // host-prefix: node-b gives its block back once the address has rested
    b.allocator.returnBlocks();
    assertThat(fixture.store.blocks)
        .doesNotContainKey(ResourceNames.blockName("p", ofB.get(given).block()));

    // what node-a knows is younger than RELIST_AFTER: it answers from it, without a listing
    int listings = fixture.store.listings.get();
    assertThatThrownBy(() -> a.add(pool, 101)).isInstanceOf(AllocationException.class);
    assertThat(fixture.store.listings.get()).isEqualTo(listings);

    fixture.clock.advance(BlockClaims.RELIST_AFTER.plus(Duration.ofMillis(1)));
    Lease lease = a.add(pool, 102);

    assertThat(fixture.store.listings.get()).isEqualTo(listings + 1);
    assertThat(lease.ip()).isEqualTo(ofB.get(given).ip());
  }

  @Test
  void aSlotThatTurnedSharedIsFoundByTheNextListingAndItsFreeAddressesServed() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 29, 0); // two /29 slots
    Cidr slot = Cidr.parse("10.0.0.8/29");
    assertThat(fixture.store.claimSharedSlot("p", slot)).isNotNull();
    List<IpAddress> addresses = new ArrayList<>();
    pool.layout().assignable(slot).forEach(addresses::add);
    IpAddress heldElsewhere = addresses.get(new Random(seed).nextInt(addresses.size()));
    fixture.store.claimSubClaim("p", heldElsewhere, "node-c", slot);
    Set<IpAddress> handedOut = new HashSet<>();
    int i = 0;
    while (true) {
      try {
        handedOut.add(a.add(pool, i++).ip());
      } catch (AllocationException e) {
        break;
      }
    }

    Set<IpAddress> fromShared = new HashSet<>(handedOut);
    fromShared.removeIf(ip -> !slot.contains(ip));
    Set<IpAddress> expected = new HashSet<>(addresses);
    expected.remove(heldElsewhere);
    assertThat(fromShared).isEqualTo(expected);
    assertThat(handedOut).hasSize(expected.size() + 7); // and every address of the other slot
  }

  @Test
  void aListingForgetsOnlyWhatItKnewBeforeItBegan() {
    Ledger ledger = a.ledger;
    Cidr gone = Cidr.parse("10.0.0.0/29");
    Cidr learnedMeanwhile = Cidr.parse("10.0.0.8/29");
    Cidr subClaim = Cidr.parse("10.0.0.17/32");
    ledger.blocks().blockTaken("p", gone);
    ledger.blocks().subClaimSeen("p", subClaim, "uid-s", ResourceNames.blockName("p", gone));

    LedgerBlocks.Listing before = ledger.blocks().listingStarts("p");
    ledger.blocks().blockTaken("p", learnedMeanwhile); // a 409 while the listing ran
    ledger.blocks().listed(before, List.of());

    assertThat(ledger.blocks().taken("p", gone)).isFalse();
    assertThat(ledger.blocks().taken("p", subClaim)).isFalse();
    assertThat(ledger.blocks().taken("p", learnedMeanwhile)).isTrue();
  }
}
