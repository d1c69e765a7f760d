package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Allocation through sub-claims of Shared slots, and the rule that claims a slot Shared. */
class SharedSlotsTest {

  private static final Cidr SLOT = Cidr.parse("10.0.0.0/29");

  @RegisterExtension final NodeFixture fixture = new NodeFixture();
  private final NodeFixture.Node a = fixture.node("node-a", 7);
  private final NodeFixture.Node b = fixture.node("node-b", 9);

  /** One slot, 10.0.0.0/29: six assignable addresses (the pool's network and broadcast are not). */
  private static PoolView oneSlot(Integer nodes) {
    return AllocatorTest.pool("p", "10.0.0.0/29", 29, 0).withNodes(nodes);
  }

  private String sharedSlotInStore() {
    return fixture.store.claimSharedSlot("p", SLOT);
  }

  private void seesShared(NodeFixture.Node node, String uid) {
    node.ledger.blocks().slotSeen("p", SLOT, uid, true, false);
  }

  private List<FakeStore.Block> subClaims() {
    return fixture.store.blocks.values().stream().filter(b -> b.parent() != null).toList();
  }

  @Test
  void aFreeAddressOfASharedSlotIsSubClaimed() {
    seesShared(a, sharedSlotInStore());

    Lease lease = a.add(oneSlot(null), 0);

    assertThat(lease.block()).isEqualTo(Cidr.of(lease.ip(), 32));
    assertThat(SLOT.contains(lease.ip())).isTrue();
    FakeStore.Block claim = fixture.store.blocks.get(ResourceNames.subClaimName("p", lease.ip()));
    assertThat(claim.node()).isEqualTo("node-a");
    assertThat(claim.parent()).isEqualTo(ResourceNames.blockName("p", SLOT));
  }

  @Test
  void everyAddressOfASharedSlotIsReachableFromTwoNodesAndHeldOnce() {
    seesShared(a, sharedSlotInStore());
    seesShared(b, fixture.store.blocks.get(ResourceNames.blockName("p", SLOT)).uid());
    PoolView pool = oneSlot(null);
    Set<IpAddress> ips = new HashSet<>();
    for (int i = 0; i < 6; i++) {
      NodeFixture.Node node = i % 2 == 0 ? a : b;
      ips.add(node.add(pool, i).ip());
      // each node's watch of the pool's blocks shows the other's sub-claims
      fixture.store.blocks.forEach(
          (name, block) -> {
            if (block.parent() != null) {
              IpAddress ip = ResourceNames.parseBlockLabel(name.substring(2)).network();
              a.ledger.blocks().subClaimSeen("p", Cidr.of(ip, 32), block.uid(), block.parent());
              b.ledger.blocks().subClaimSeen("p", Cidr.of(ip, 32), block.uid(), block.parent());
            }
          });
    }

    assertThat(ips).hasSize(6);
    assertThatThrownBy(() -> a.add(pool, 6)).isInstanceOf(AllocationException.class);
  }

  @Test
  void aSubClaimAnotherNodeWonMovesOnToAnotherAddress() {
    seesShared(a, sharedSlotInStore());
    PoolView pool = oneSlot(null);
    List<IpAddress> all = new ArrayList<>();
    pool.layout().assignable(SLOT).forEach(all::add);
    // another node holds every address but the last, and node-a has not seen it yet
    for (IpAddress ip : all.subList(0, all.size() - 1)) {
      fixture.store.claimSubClaim("p", ip, "node-c", SLOT);
    }

    Lease lease = a.add(pool, 0);

    assertThat(lease.ip()).isEqualTo(all.get(all.size() - 1));
  }

  @Test
  void aSubClaimUnderAParentBeingDeletedGoesBackAtOnce() {
    String uid = sharedSlotInStore();
    seesShared(a, uid);
    fixture.store.blocks.put(
        ResourceNames.blockName("p", SLOT), new FakeStore.Block(null, uid, null, true, true));

    assertThatThrownBy(() -> a.add(oneSlot(null), 0)).isInstanceOf(AllocationException.class);

    assertThat(subClaims()).isEmpty();
    assertThat(a.ledger.blocks().ownBlocks("p")).isEmpty();
  }

  @Test
  void aSubClaimGoesBackAfterItsAddressIsReleased() {
    seesShared(a, sharedSlotInStore());
    PoolView pool = oneSlot(null);
    a.add(pool, 0);

    a.del(pool, 0);

    assertThat(subClaims()).isEmpty();
    assertThat(a.ledger.blocks().ownBlocks("p")).isEmpty();
  }

  /**
   * A sub-claim left under a slot (a fault: a node that sub-claimed it while the slot was not
   * Shared) is found by the listing the new holder makes of the slot's sub-claims as it claims it
   * Exclusive, and by any other node's listing of the pool: nobody hands its address out.
   */
  @Test
  void aSubClaimUnderASlotSeenExclusiveIsNeverUsedByAnotherNodeNorByTheHolder() {
    PoolView pool = oneSlot(null);
    List<IpAddress> all = new ArrayList<>();
    pool.layout().assignable(SLOT).forEach(all::add);
    long seed =
        Long.getLong("kipam.seed", java.util.concurrent.ThreadLocalRandom.current().nextLong());
    System.out.println("seed " + seed + " (-Dkipam.seed= repeats it)");
    IpAddress foreign = all.get(new java.util.Random(seed).nextInt(all.size()));
    fixture.store.claimSubClaim("p", foreign, "node-c", SLOT);
    Lease first = a.add(pool, 0); // node-a claims the slot Exclusive
    assertThat(first.block()).isEqualTo(SLOT);

    assertThatThrownBy(() -> b.add(pool, 1)).isInstanceOf(AllocationException.class);
    List<IpAddress> handedOut = new ArrayList<>();
    for (int i = 2; i < 2 + all.size() - 2; i++) {
      handedOut.add(a.add(pool, i).ip());
    }

    assertThat(handedOut).doesNotContain(foreign, first.ip()).hasSize(all.size() - 2);
    assertThatThrownBy(() -> a.add(pool, 99)).isInstanceOf(AllocationException.class);
    assertThat(subClaims()).hasSize(1);
    assertThat(fixture.store.blocks).containsKey(ResourceNames.subClaimName("p", foreign));
  }

  @Test
  void withTheNumberOfNodesUnknownANewSlotIsClaimedExclusive() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 29, 0);

    a.add(pool, 0);

    assertThat(fixture.store.blocks.get(ResourceNames.blockName("p", SLOT)).node())
        .isEqualTo("node-a");
    assertThat(subClaims()).isEmpty();
  }

  @Test
  void withAsManyUnclaimedSlotsAsNodesANewSlotIsClaimedExclusive() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 29, 0).withNodes(2);

    Lease lease = a.add(pool, 0);

    assertThat(lease.block().prefixLength()).isEqualTo(29);
    assertThat(subClaims()).isEmpty();
  }

  @Test
  void withFewerUnclaimedSlotsThanNodesASlotIsClaimedSharedFromBirthAndSharedByAll() {
    PoolView pool = AllocatorTest.pool("p", "10.0.0.0/28", 29, 0).withNodes(4);

    Lease first = a.add(pool, 0);
    Cidr slot = SLOT.contains(first.ip()) ? SLOT : Cidr.parse("10.0.0.8/29");
    FakeStore.Block stored = fixture.store.blocks.get(ResourceNames.blockName("p", slot));
    b.ledger.blocks().slotSeen("p", slot, stored.uid(), true, false); // node-b's watch of the pool
    b.ledger.blocks().subClaimSeen("p", first.block(), "uid", ResourceNames.blockName("p", slot));
    Lease second = b.add(pool, 1);

    assertThat(stored.node()).isNull();
    assertThat(first.block().prefixLength()).isEqualTo(32);
    assertThat(second.block().prefixLength()).isEqualTo(32);
    assertThat(slot.contains(second.ip())).as("node-b uses the same Shared slot").isTrue();
    assertThat(subClaims()).hasSize(2);
  }

  @Test
  void aSubClaimWhoseAnswerWasLostGoesBackWhenTheWatchBringsIt() {
    seesShared(a, sharedSlotInStore());
    fixture.store.lostSubClaimAnswers = true;

    assertThatThrownBy(() -> a.add(oneSlot(null), 0))
        .isInstanceOf(WriteOutcomeUnknownException.class);
    String name = subClaimNames().get(0);
    FakeStore.Block claim = fixture.store.blocks.get(name);
    IpAddress ip = ResourceNames.parseBlockLabel(name.substring(2)).network();
    a.ledger
        .blocks()
        .ownBlockSeen(fixture.status.object(new BlockRef("p", Cidr.of(ip, 32), claim.uid())));
    a.allocator.returnBlocks();

    assertThat(subClaims()).isEmpty();
  }

  private List<String> subClaimNames() {
    return fixture.store.blocks.entrySet().stream()
        .filter(e -> e.getValue().parent() != null)
        .map(java.util.Map.Entry::getKey)
        .toList();
  }
}
