package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Host-prefix pools (blockSize /32 or /128): the block is the allocation and goes back with it. */
class HostPrefixTest {

  @RegisterExtension final NodeFixture fixture = new NodeFixture();
  private final NodeFixture.Node a = fixture.node("node-a", 7);
  private final NodeFixture.Node b = fixture.node("node-b", 9);

  private static PoolView shared(int reuseDelaySeconds) {
    return AllocatorTest.pool("shared", "10.0.0.0/29", 32, reuseDelaySeconds);
  }

  @Test
  void everyAllocationClaimsABlockOfItsOwn() {
    PoolView pool = shared(0);
    Lease first = a.add(pool, 0);
    Lease second = a.add(pool, 1);

    assertThat(first.block().prefixLength()).isEqualTo(32);
    assertThat(a.ledger.blocks().ownBlocks("shared"))
        .containsExactlyInAnyOrder(first.block(), second.block());
    assertThat(fixture.store.blocks).hasSize(2);
  }

  @Test
  void aDelGivesTheBlockBackAtOnceSoAnotherNodeCanClaimIt() {
    PoolView pool = AllocatorTest.pool("one", "10.0.0.4/32", 32, 0);
    Lease lease = a.add(pool, 0);
    b.ledger.blocks().blockTaken("one", lease.block()); // node-b's watch of the pool's blocks

    a.del(pool, 0);

    assertThat(fixture.store.blocks).isEmpty();
    assertThat(a.ledger.blocks().ownBlocks("one")).isEmpty();
    b.ledger.blocks().blockGone(a.block("one", lease.block())); // node-b's watch sees it go
    Lease there = b.add(pool, 1);
    assertThat(there.ip()).isEqualTo(lease.ip());
    assertThat(there.pod().namespace()).isNotEqualTo(lease.pod().namespace());
  }

  @Test
  void aLateWatchEventOfABlockThisNodeDeletedDoesNotBringItBack() {
    PoolView pool = AllocatorTest.pool("one", "10.0.0.4/32", 32, 0);
    Lease lease = a.add(pool, 0);
    BlockObject before = fixture.status.object(a.block("one", lease.block()));

    a.del(pool, 0);
    a.ledger.blocks().ownBlockSeen(before); // e.g. a status write from before the delete

    assertThat(a.ledger.blocks().ownBlocks("one")).isEmpty();
    assertThat(a.ledger.reserveFree(pool, new java.util.Random(1))).isEmpty();
  }

  @Test
  void aBlockGoesBackOnlyOnceItsAddressHasRested() {
    PoolView pool = shared(30);
    Lease lease = a.add(pool, 0);
    a.del(pool, 0);
    a.allocator.returnBlocks();
    assertThat(a.ledger.blocks().ownBlocks("shared")).containsExactly(lease.block());

    fixture.clock.advance(Duration.ofSeconds(31));
    a.allocator.returnBlocks();

    assertThat(a.ledger.blocks().ownBlocks("shared")).isEmpty();
    assertThat(fixture.store.blocks).isEmpty();
  }

  @Test
  void aBlockWhoseAddressIsHeldAgainStays() {
    PoolView pool = AllocatorTest.pool("one", "10.0.0.4/32", 32, 30);
    Lease lease = a.add(pool, 0);
    a.del(pool, 0);
    fixture.clock.advance(Duration.ofSeconds(31));
    Lease again = a.add(pool, 1);

    a.allocator.returnBlocks();

    assertThat(again.block()).isEqualTo(lease.block());
    assertThat(a.ledger.blocks().ownBlocks("one")).containsExactly(lease.block());
  }

  @Test
  void anAddressTheGarbageCollectorRemovedGivesItsBlockBack() {
    PoolView pool = shared(0);
    Lease lease = a.add(pool, 0);
    fixture.store.addresses.clear(); // the pod went, and its IPAddress with it

    a.ledger.objectGone(lease.address(), lease.object());
    a.allocator.returnBlocks();

    assertThat(fixture.store.blocks).isEmpty();
  }

  @Test
  void aBlockDeleteWithoutAnswerKeepsTheBlockClosedUntilTriedAgain() {
    PoolView pool = AllocatorTest.pool("one", "10.0.0.4/32", 32, 0);
    Lease lease = a.add(pool, 0);
    fixture.store.lostBlockDeletes = true;
    fixture.store.failWrites = false;

    a.del(pool, 0);

    // Gone in the API, unknown to the node: nothing may be allocated from it.
    assertThat(fixture.store.blocks).isEmpty();
    fixture.store.lostBlockDeletes = false;
    assertThat(a.ledger.blocks().ownBlocks("one")).containsExactly(lease.block());
    assertThat(a.ledger.reserveFree(pool, new java.util.Random(1))).isEmpty();
    a.allocator.returnBlocks();
    assertThat(a.ledger.blocks().ownBlocks("one")).isEmpty();
  }

  @Test
  void aBlockLeftBehindByADaemonThatStoppedGoesBackAfterTheRestart() {
    PoolView pool = shared(0);
    Lease lease = a.add(pool, 0);
    BlockRef block = a.block("shared", lease.block());
    fixture.store.addresses.clear(); // deleted while no daemon ran

    Ledger restarted = new Ledger("node-a", fixture.clock);
    restarted.poolSeen("shared", Duration.ZERO);
    restarted.blocks().ownBlockSeen(fixture.status.object(block));
    restarted.markSynced();
    new Allocator(restarted, fixture.store, new java.util.Random(3)).returnBlocks();

    assertThat(fixture.store.blocks).isEmpty();
    a.ledger.blocks().blockGone(block);
    a.ledger.objectGone(lease.address(), lease.object());
  }

  @Test
  void nothingIsGivenBackBeforeTheLedgerHasSynced() {
    PoolView pool = shared(0);
    Lease lease = a.add(pool, 0);
    BlockRef block = a.block("shared", lease.block());

    // A restarted daemon whose watch has shown the block but not yet its address.
    Ledger restarted = new Ledger("node-a", fixture.clock);
    restarted.poolSeen("shared", Duration.ZERO);
    restarted.blocks().ownBlockSeen(fixture.status.object(block));
    new Allocator(restarted, fixture.store, new java.util.Random(3)).returnBlocks();

    assertThat(fixture.store.blocks).containsKey(block.name());
  }

  @Test
  void aFailedAddGivesBackTheBlockItClaimed() {
    PoolView pool = shared(0);
    fixture.store.rejectCreates = true;

    assertThatThrownBy(() -> a.add(pool, 0)).isInstanceOf(RequestRejectedException.class);

    fixture.store.rejectCreates = false;
    assertThat(fixture.store.blocks).isEmpty();
  }

  @Test
  void churnOnTwoNodesOverASmallSharedRangeNeverSharesAnAddress() throws Exception {
    PoolView pool = shared(0);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    List<Future<?>> work = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      NodeFixture.Node mine = t % 2 == 0 ? a : b;
      NodeFixture.Node theirs = mine == a ? b : a;
      int base = t * 1000;
      work.add(
          threads.submit(
              () -> {
                for (int i = 0; i < 300; i++) {
                  int id = base + ThreadLocalRandom.current().nextInt(4);
                  try {
                    if (ThreadLocalRandom.current().nextBoolean()) {
                      Lease lease = mine.add(pool, id);
                      theirs.ledger.blocks().blockTaken("shared", lease.block());
                    } else {
                      mine.del(pool, id);
                    }
                  } catch (AllocationException expected) {
                    // the range is full for now; the runtime would retry
                  }
                  if (i % 10 == 0) {
                    mine.allocator.returnBlocks();
                    forgetGoneBlocks(theirs);
                  }
                }
              }));
    }
    for (Future<?> f : work) {
      f.get(60, TimeUnit.SECONDS);
    }
    threads.shutdown();

    Set<IpAddress> ips = new HashSet<>();
    fixture.store.addresses.values().forEach(l -> assertThat(ips.add(l.ip())).isTrue());
  }

  /** What a node's watch of the pool's blocks tells it: blocks gone from the API are free. */
  private void forgetGoneBlocks(NodeFixture.Node n) {
    for (var cidr : shared(0).layout().usableBlocks()) {
      if (!fixture.store.blocks.containsKey(new BlockRef("shared", cidr, "").name())) {
        n.ledger.blocks().blockGone(new BlockRef("shared", cidr, "gone"));
      }
    }
  }
}
