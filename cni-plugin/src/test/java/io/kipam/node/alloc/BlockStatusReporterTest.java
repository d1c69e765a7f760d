package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class BlockStatusReporterTest {

  @RegisterExtension final NodeFixture fixture = new NodeFixture();
  private final NodeFixture.Node node = fixture.node("node-a", 7);
  private final PoolView pool = AllocatorTest.pool("p4", "10.0.0.0/24", 26, 0);

  private long allocatedOf(Lease lease) {
    return fixture.status.status(node.block("p4", lease.block())).allocated();
  }

  /** The node's first address, whose block's count was written a minute ago. */
  private Lease reportedAMinuteAgo() {
    Lease lease = node.add(pool, 0);
    node.reporter.report();
    fixture.clock.advance(Duration.ofMinutes(1));
    return lease;
  }

  /** The node's report of the next period. */
  private void reportAfterAPeriod() {
    fixture.clock.advance(NodeFixture.STATUS_PERIOD);
    node.reporter.report();
  }

  @Test
  void aBurstOfAllocationsCostsOneWriteEachAndTwoStatusWrites() {
    Lease first = node.add(pool, 0);
    int writes = fixture.store.writes.get();

    node.reporter.report();
    for (int i = 1; i < 30; i++) {
      node.add(pool, i);
      fixture.clock.advance(Duration.ofMillis(100));
      node.reporter.report();
    }

    assertThat(fixture.store.writes.get() - writes).as("one create per allocation").isEqualTo(29);
    assertThat(fixture.status.allocatedWrites.get()).as("coalesced so far").isEqualTo(1);
    assertThat(allocatedOf(first)).isEqualTo(1);
    reportAfterAPeriod();
    assertThat(fixture.status.allocatedWrites.get()).isEqualTo(2);
    assertThat(allocatedOf(first)).isEqualTo(30);
  }

  @Test
  void anAddressBeingWrittenCountsAsAllocated() {
    // In host-prefix mode a block is claimed for one ADD and holds nothing but the address being
    // written: a count of 0 there would let an operator with a short idle delay ask for it.
    PoolView hostPrefix = AllocatorTest.pool("p32", "10.0.1.0/28", 32, 0);
    java.util.List<Long> seen = new java.util.ArrayList<>();
    fixture.store.onCreate =
        lease -> {
          node.reporter.report();
          seen.add(fixture.status.status(node.block("p32", lease.block())).allocated());
        };

    node.add(hostPrefix, 0);

    assertThat(seen).containsExactly(1L);
  }

  @Test
  void aFirstChangeAfterQuietIsWrittenAtOnce() {
    Lease lease = reportedAMinuteAgo();

    node.add(pool, 1);
    node.reporter.report();

    assertThat(fixture.status.allocatedWrites.get()).isEqualTo(2);
    assertThat(allocatedOf(lease)).isEqualTo(2);
  }

  @Test
  void anUnchangedCountIsNotWrittenAgain() {
    Lease lease = reportedAMinuteAgo();

    node.add(pool, 1);
    node.del(pool, 1);
    for (int i = 0; i < 10; i++) {
      reportAfterAPeriod();
    }

    assertThat(fixture.status.allocatedWrites.get()).isEqualTo(1);
    assertThat(allocatedOf(lease)).isEqualTo(1);
  }

  @Test
  void aCountTheBlockAlreadyCarriesIsNotWritten() {
    Lease lease = node.add(pool, 0);
    node.add(pool, 1);
    BlockRef block = node.block("p4", lease.block());
    // A restarted daemon: the block watch shows the count written before the restart.
    node.ledger.blocks().ownBlockSeen(new BlockObject(block, "7", true, null, null, 2L));

    node.reporter.report();

    assertThat(fixture.status.allocatedWrites.get()).isZero();
  }

  @Test
  void aCountSomeoneElseWroteIsCorrectedWithinAPeriod() {
    Lease lease = node.add(pool, 0);
    node.reporter.report();
    BlockRef block = node.block("p4", lease.block());
    fixture.status.writeAllocated(fixture.status.object(block), 99);

    reportAfterAPeriod();

    assertThat(allocatedOf(lease)).isEqualTo(1);
  }

  @Test
  void anEmptyBlockWithoutACountIsReportedEmpty() {
    Lease lease = node.add(pool, 0);
    node.del(pool, 0);

    node.reporter.report();

    assertThat(fixture.status.allocatedWrites.get()).isEqualTo(1);
    assertThat(fixture.status.status(node.block("p4", lease.block())).allocated()).isZero();
  }

  @Test
  void addressesOfUncertainStateCountAsTaken() {
    Lease held = node.add(pool, 0);
    fixture.store.lostAnswers = 1.0;
    assertThatThrownBy(() -> node.add(pool, 1)).isInstanceOf(WriteOutcomeUnknownException.class);
    fixture.store.lostAnswers = 0;

    node.reporter.report();

    assertThat(allocatedOf(held)).isEqualTo(2);
    node.allocator.settle(Duration.ZERO);
  }

  @Test
  void failedWritesAreTriedAgainButNotMoreOftenThanOncePerPeriod() {
    Lease lease = node.add(pool, 0);
    fixture.status.failWrites = true;
    node.reporter.report();
    fixture.clock.advance(Duration.ofSeconds(1));
    node.reporter.report();
    fixture.status.failWrites = false;
    node.reporter.report();
    assertThat(fixture.status.allocatedWrites.get()).isZero();

    reportAfterAPeriod();

    assertThat(allocatedOf(lease)).isEqualTo(1);
  }

  @Test
  void everyBlockOfTheNodeIsCountedOnItsOwn() {
    PoolView small = AllocatorTest.pool("p4", "10.0.0.0/24", 30, 0);
    for (int i = 0; i < 6; i++) {
      node.add(small, i);
    }

    node.reporter.report();

    long total = 0;
    for (var cidr : node.ledger.blocks().ownBlocks("p4")) {
      Long count = fixture.status.status(node.block("p4", cidr)).allocated();
      assertThat(count).isBetween(1L, 4L);
      total += count;
    }
    assertThat(total).isEqualTo(6);
  }

  @Test
  void nothingIsWrittenBeforeTheLedgerHasSynced() {
    Ledger fresh = new Ledger("node-b", fixture.clock);
    var cidr = pool.layout().block(java.math.BigInteger.ONE);
    BlockRef block = new BlockRef("p4", cidr, fixture.store.claimBlock("p4", cidr, "node-b"));
    fresh.blocks().ownBlockSeen(fixture.status.object(block));
    fresh.leaseSeen(
        new Lease(
            "p4",
            cidr.network().next(),
            cidr,
            "node-b",
            NodeFixture.NETWORK,
            NodeFixture.attachment(1),
            NodeFixture.pod(1),
            null,
            "object-1"));
    BlockStatusReporter reporter =
        new BlockStatusReporter(fresh, fixture.status, fixture.clock, NodeFixture.STATUS_PERIOD);

    reporter.report();
    assertThat(fixture.status.allocatedWrites.get()).isZero();

    fresh.markSynced();
    reporter.report();
    assertThat(fixture.status.status(block).allocated()).isEqualTo(1);
    fixture.store.blocks.remove(block.name());
  }
}
