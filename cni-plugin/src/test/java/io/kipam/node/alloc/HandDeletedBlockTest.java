package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A block deleted by hand, its finalizer taken off, while its IPAddresses exist (their pods still
 * run): the slot is unclaimed again, and the next node to claim it must not hand out what those
 * addresses hold. Each round draws from a seed (printed; {@code -Dkipam.seed=N} replays one) how
 * many addresses the first node held, in which namespaces, which slot it was, whether the claiming
 * node sees the pool as one to share (so it would claim the slot Shared from birth) and when the
 * leftovers go; one holder per address is checked after every step, across namespaces.
 */
class HandDeletedBlockTest {

  private static final int ROUNDS = 40;

  @Test
  void aSlotWhoseBlockWasDeletedByHandKeepsItsAddressesTakenForItsNextHolder() {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    System.out.println("HandDeletedBlockTest seed " + seed);
    Random random = new Random(seed);
    for (int round = 0; round < ROUNDS; round++) {
      long roundSeed = random.nextLong();
      try {
        round(new Random(roundSeed));
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("round " + round + " (round seed " + roundSeed + ")", e);
      }
    }
  }

  /**
   * The claim's read of its new block's IPAddresses can hold one of this node's own, written by
   * another of its calls after the claim and released since (the read older than the DEL): it must
   * not be taken again. Each round (seeded) serves a block to its end twice, without and with such
   * a read naming one of the addresses the first run served; the second must serve as many.
   */
  @Test
  void anOwnAddressInTheClaimsReadOfItsBlockIsNotTakenAgain() {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    System.out.println("HandDeletedBlockTest own-address seed " + seed);
    Random random = new Random(seed);
    for (int round = 0; round < 20; round++) {
      long allocatorSeed = random.nextLong();
      PoolView pool = AllocatorTest.pool("p", "10.9.0.0/26", 28, 0); // four slots of 16
      List<Lease> served = serveFirstBlock(new FakeStore(), pool, allocatorSeed);
      Lease gone = served.get(random.nextInt(served.size()));
      FakeStore stale = new FakeStore();
      stale.staleListing =
          block ->
              block.equals(gone.block())
                  ? List.of(
                      new Lease(
                          "p",
                          gone.ip(),
                          block,
                          "node-a",
                          NodeFixture.NETWORK,
                          new Attachment("gone", "eth0"),
                          NodeFixture.pod(999),
                          null,
                          "uid-gone"))
                  : List.of();

      List<Lease> again = serveFirstBlock(stale, pool, allocatorSeed);

      assertThat(again)
          .as("round %d: %s named by the read, released before it", round, gone.ip())
          .hasSameSizeAs(served)
          .anySatisfy(l -> assertThat(l.ip()).isEqualTo(gone.ip()));
    }
  }

  /** Node A's leases in the first block it claims, ADD after ADD until it claims a second. */
  private static List<Lease> serveFirstBlock(FakeStore store, PoolView pool, long seed) {
    Ledger ledger = new Ledger("node-a", new AllocatorTest.MutableClock());
    ledger.markSynced();
    Allocator a = new Allocator(ledger, store, new Random(seed));
    List<Lease> first = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      Lease lease = add(a, pool, i);
      if (!first.isEmpty() && !lease.block().equals(first.get(0).block())) {
        return first;
      }
      first.add(lease);
    }
    return first;
  }

  private static void round(Random random) {
    AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
    FakeStore store = new FakeStore();
    Ledger ledgerA = new Ledger("node-a", clock);
    Ledger ledgerB = new Ledger("node-b", clock);
    ledgerA.markSynced();
    ledgerB.markSynced();
    Allocator a = new Allocator(ledgerA, store, new Random(random.nextLong()));
    Allocator b = new Allocator(ledgerB, store, new Random(random.nextLong()));
    boolean shared = random.nextBoolean();
    PoolView pool = AllocatorTest.pool("p", "10.9.0.0/26", 28, 0); // four slots of 16
    PoolView asSeenByB = shared ? pool.withNodes(8) : pool;

    // Node A holds 1..12 addresses of one slot, its pods in three namespaces.
    int held = 1 + random.nextInt(12);
    List<Lease> left = new ArrayList<>();
    for (int i = 0; i < held; i++) {
      left.add(add(a, pool, i));
    }
    Cidr slot = left.get(0).block();
    BlockRef handDeleted = new BlockRef("p", slot, store.blocks.get(left.get(0).blockName()).uid());
    // Every other slot is held by a third node, so the deleted one is the only one left.
    for (Cidr other : pool.layout().usableBlocks()) {
      if (!other.equals(slot)) {
        store.claimBlock("p", other, "node-c");
        ledgerB.blocks().blockTaken("p", other);
      }
    }
    store.blocks.remove(handDeleted.name());
    ledgerA.blocks().blockGone(handDeleted);
    System.out.printf(
        "  slot %s, %d addresses left in it, claimed %s%n",
        slot, held, shared ? "by a node that would share it" : "Exclusive");

    // Node B serves pods until the pool has nothing for it.
    Set<IpAddress> leftIps = left.stream().map(Lease::ip).collect(Collectors.toSet());
    List<Lease> served = serveAll(b, asSeenByB, 1000, store);
    assertThat(served).noneMatch(l -> leftIps.contains(l.ip()));
    int assignable = pool.layout().assignableCount(slot).intValueExact();
    assertThat(served)
        .as("a slot claimed Exclusive serves what is free in it; one to share waits")
        .hasSize(shared ? 0 : assignable - held);

    // Some of the leftovers go (kipam-operator removed them and their pods went).
    List<Lease> gone = new ArrayList<>();
    for (Lease lease : left) {
      if (random.nextBoolean()) {
        store.addresses.values().remove(lease);
        gone.add(lease);
      }
    }
    clock.advance(Duration.ofSeconds(1));
    b.recheckForeign(Duration.ZERO);
    clock.advance(Duration.ofSeconds(1));
    List<Lease> more = serveAll(b, asSeenByB, 2000, store);
    Set<IpAddress> stillHeld = stillHeld(left, gone);
    assertThat(more).noneMatch(l -> stillHeld.contains(l.ip()));
    if (!shared) {
      assertThat(more).extracting(Lease::ip).hasSameSizeAs(gone);
    } else if (gone.size() == held) {
      assertThat(more).as("the slot, empty now, is claimed Shared and served").isNotEmpty();
    } else {
      assertThat(more).as("the slot still holds someone's address: not shared yet").isEmpty();
    }
  }

  private static Set<IpAddress> stillHeld(List<Lease> left, List<Lease> gone) {
    return left.stream().filter(l -> !gone.contains(l)).map(Lease::ip).collect(Collectors.toSet());
  }

  /** ADDs on {@code node} from pod {@code first} on until one fails; what they got. */
  private static List<Lease> serveAll(Allocator node, PoolView pool, int first, FakeStore store) {
    List<Lease> served = new ArrayList<>();
    for (int i = first; ; i++) {
      int pod = i;
      try {
        served.add(add(node, pool, pod));
      } catch (AllocationException e) {
        return served;
      } finally {
        assertOneHolderEach(store);
      }
    }
  }

  private static Lease add(Allocator node, PoolView pool, int i) {
    return node.allocate(
            AddRequest.dynamic(
                List.of(pool),
                new Attachment("container-" + i, "eth0"),
                NodeFixture.pod(i),
                NodeFixture.NETWORK,
                null))
        .get(0);
  }

  private static void assertOneHolderEach(FakeStore store) {
    Map<IpAddress, String> holders = new HashMap<>();
    for (Lease lease : store.addresses.values()) {
      String previous = holders.put(lease.ip(), lease.pod().namespace() + "/" + lease.pod().name());
      assertThat(previous)
          .as(
              "%s held twice: by %s and by %s/%s",
              lease.ip(), previous, lease.pod().namespace(), lease.pod().name())
          .isNull();
    }
  }
}
