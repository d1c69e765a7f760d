package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.Cidr;
import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ReleaseResponderTest {

  private static final String ROUND = "2026-01-01T00:00:00Z";

  @RegisterExtension final NodeFixture fixture = new NodeFixture();
  private final NodeFixture.Node node = fixture.node("node-a", 7);
  private final PoolView pool = AllocatorTest.pool("p4", "10.0.0.0/24", 28, 0);

  private BlockRef blockOf(Lease lease) {
    return node.block("p4", lease.block());
  }

  /** A block of {@code pool} the node has allocated from and that holds no address now. */
  private BlockRef emptyBlock(PoolView pool) {
    Lease lease = node.add(pool, 0);
    node.del(pool, 0);
    return blockOf(lease);
  }

  /** The operator asks for {@code block} back in round {@link #ROUND}; the node answers. */
  private void askAndRespond(BlockRef block) {
    fixture.status.request(block, ROUND);
    node.responder.respond();
  }

  @Test
  void anEmptyBlockIsAnsweredReadyAndNothingIsAllocatedFromItAfterwards() {
    BlockRef block = emptyBlock(pool);

    askAndRespond(block);

    FakeBlockStatus.Status status = fixture.status.status(block);
    assertThat(status.release()).isEqualTo(ReleaseState.Ready);
    assertThat(status.requestedAt()).isEqualTo(ROUND);
    assertThat(status.respondedAt()).isNotNull();
    assertThat(node.add(pool, 1).block()).isNotEqualTo(block.cidr());
    assertThat(fixture.status.deleteIfReady(block, ROUND)).isTrue();
    assertThat(node.ledger.blocks().ownBlocks("p4")).doesNotContain(block.cidr());
  }

  @Test
  void aBlockInUseIsRefusedNamingHowManyAddressesAndOpensAgain() {
    Lease first = node.add(pool, 0);
    node.add(pool, 1);
    node.add(pool, 2);
    BlockRef block = blockOf(first);

    fixture.status.request(block, ROUND);
    // While the request stands, the node allocates from another block.
    Lease meanwhile = node.add(pool, 3);
    assertThat(meanwhile.block()).isNotEqualTo(block.cidr());
    node.responder.respond();

    FakeBlockStatus.Status status = fixture.status.status(block);
    assertThat(status.release()).isEqualTo(ReleaseState.Refused);
    assertThat(status.reason()).startsWith("3 of its addresses are in use on node node-a");
    assertThat(status.requestedAt()).isEqualTo(ROUND);
    assertThat(fixture.status.deleteIfReady(block, ROUND)).isFalse();
    node.del(pool, 3);
    assertThat(node.add(pool, 4).block()).isEqualTo(block.cidr());
  }

  @Test
  void aBlockReleasedBeforeTheAnswerToItsClaimArrivesIsNeverAllocatedFrom() {
    // The watch shows the new block, the operator asks for it, the node answers Ready and the
    // operator deletes it, all before the node has processed the answer to its claim.
    AtomicBoolean once = new AtomicBoolean();
    var shown = fixture.store.onClaim;
    fixture.store.onClaim =
        ref -> {
          shown.accept(ref);
          if (once.compareAndSet(false, true)) {
            fixture.status.request(ref, ROUND);
            node.responder.respond();
            assertThat(fixture.status.deleteIfReady(ref, ROUND)).isTrue();
          }
        };

    Lease lease = node.add(pool, 0);

    assertThat(fixture.store.blocks).containsKey(new BlockRef("p4", lease.block(), "").name());
    assertThat(node.ledger.blocks().ownBlocks("p4")).containsExactly(lease.block());
  }

  @Test
  void aReadyBlockIsNeverAllocatedFromUntilItsReleaseIsCleared() {
    BlockRef block = emptyBlock(pool);
    askAndRespond(block);
    assertThat(node.add(pool, 1).block()).isNotEqualTo(block.cidr());

    fixture.status.clear(block);
    node.del(pool, 1);

    assertThat(node.add(pool, 2).block()).isEqualTo(block.cidr());
  }

  @Test
  void aBlockBeingDeletedIsClosedForGoodWhateverItsStatusSays() {
    BlockRef block = emptyBlock(pool);
    BlockObject shown = fixture.status.object(block);

    // Deleted by hand (or by its pool's garbage collection): its finalizer keeps it for now.
    node.ledger
        .blocks()
        .ownBlockSeen(
            new BlockObject(
                block,
                shown.resourceVersion() + "0",
                shown.hasStatus(),
                null,
                null,
                shown.allocated(),
                true));

    assertThat(node.add(pool, 1).block()).isNotEqualTo(block.cidr());
    assertThat(node.add(pool, 2).block()).isNotEqualTo(block.cidr());
  }

  @Test
  void anAddressStillRestingHoldsTheAnswerBackUntilItHasRested() {
    PoolView slow = AllocatorTest.pool("p4", "10.0.0.0/24", 28, 30);
    BlockRef block = emptyBlock(slow);

    askAndRespond(block);

    assertThat(fixture.status.status(block).release())
        .as("no answer while the released address rests: the block would carry it elsewhere")
        .isEqualTo(ReleaseState.Requested);
    assertThat(node.add(slow, 1).block()).isNotEqualTo(block.cidr());
    node.del(slow, 1);

    fixture.clock.advance(Duration.ofSeconds(31));
    node.responder.respond();

    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Ready);
  }

  @Test
  void aReadyAnswerNoOperatorActsOnIsTakenBackAndTheBlockOpensAgain() {
    BlockRef block = emptyBlock(pool);
    askAndRespond(block);
    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Ready);

    fixture.clock.advance(NodeFixture.ABANDON_AFTER.minusSeconds(1));
    node.responder.respond();
    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Ready);

    fixture.clock.advance(Duration.ofSeconds(1));
    node.responder.respond();

    FakeBlockStatus.Status status = fixture.status.status(block);
    assertThat(status.release()).isEqualTo(ReleaseState.Refused);
    assertThat(status.requestedAt()).isEqualTo(ROUND);
    assertThat(status.reason()).contains("did not act on the Ready answer");
    assertThat(fixture.status.deleteIfReady(block, ROUND)).isFalse();
    assertThat(node.add(pool, 1).block()).isEqualTo(block.cidr());
  }

  @Test
  void anAddressBeingAllocatedKeepsABlockFromBeingReady() {
    BlockRef block = emptyBlock(pool);
    // An ADD has picked an address of the block and is writing its IPAddress.
    Ledger.Pick pick = node.ledger.reserveFree(pool, new java.util.Random(1)).orElseThrow();
    assertThat(pick.block()).isEqualTo(block.cidr());

    askAndRespond(block);

    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Refused);
    node.ledger.unreserve(new AddressKey("p4", pick.ip()));
  }

  @Test
  void anAddressOfUncertainStateKeepsABlockFromBeingReady() {
    Lease lease = node.add(pool, 0);
    BlockRef block = blockOf(lease);
    node.del(pool, 0);
    fixture.store.lostAnswers = 1.0;
    assertThatThrownBy(() -> node.add(pool, 1)).isInstanceOf(WriteOutcomeUnknownException.class);
    fixture.store.lostAnswers = 0;

    askAndRespond(block);

    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Refused);
    assertThat(fixture.status.status(block).reason()).startsWith("1 of its addresses");
    node.allocator.settle(Duration.ZERO);
  }

  @Test
  void eachRequestIsAnsweredOnce() {
    Lease lease = node.add(pool, 0);
    BlockRef block = blockOf(lease);
    fixture.status.request(block, ROUND);

    node.responder.respond();
    node.responder.respond();
    node.responder.respond();

    assertThat(fixture.status.answers.get()).isOne();
  }

  @Test
  void aBlockThatChangedBeforeTheAnswerIsDecidedAgainOnItsNewState() {
    BlockRef block = emptyBlock(pool);
    fixture.status.request(block, ROUND);
    // The node's watch has shown Requested; the operator then clears it, and the watch has not
    // delivered that yet: the answer's precondition fails.
    BlockObject seen = fixture.status.object(block);
    fixture.status.clear(block);
    node.ledger.blocks().ownBlockSeen(seen);

    node.responder.respond();
    assertThat(fixture.status.conflicts.get()).isOne();
    assertThat(fixture.status.status(block).release()).isNull();

    node.ledger.blocks().ownBlockSeen(fixture.status.object(block));
    node.responder.respond();
    assertThat(fixture.status.answers.get()).isZero();
    assertThat(node.add(pool, 1).block()).isEqualTo(block.cidr());
  }

  @Test
  void aFailedAnswerIsTriedAgainAndTheBlockStaysClosedMeanwhile() {
    BlockRef block = emptyBlock(pool);
    fixture.status.request(block, ROUND);
    fixture.status.failWrites = true;

    node.responder.respond();
    assertThat(node.add(pool, 1).block()).isNotEqualTo(block.cidr());
    fixture.status.failWrites = false;
    node.responder.respond();

    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Ready);
  }

  @Test
  void aRestartedDaemonKeepsARequestedOrReadyBlockClosedFromItsFirstSync() {
    PoolView two = AllocatorTest.pool("p4", "10.0.0.0/27", 28, 0);
    BlockRef block = emptyBlock(two);
    askAndRespond(block);
    assertThat(fixture.status.status(block).release()).isEqualTo(ReleaseState.Ready);

    for (ReleaseState state : List.of(ReleaseState.Ready, ReleaseState.Requested)) {
      Ledger restarted = new Ledger("node-a", fixture.clock);
      BlockObject shown = fixture.status.object(block);
      restarted
          .blocks()
          .ownBlockSeen(
              new BlockObject(
                  block,
                  shown.resourceVersion(),
                  true,
                  state,
                  shown.requestedAt(),
                  shown.allocated()));
      restarted.markSynced();

      assertThat(restarted.reserveFree(two, new java.util.Random(1))).isEmpty();
    }
  }

  /**
   * The operator asks for blocks back at random and deletes those answered Ready, while pods in
   * three namespaces come and go on two nodes: no address ever stays in a deleted block (the
   * invariants check that every stored address is in a block its node holds).
   */
  @Test
  void releasesDuringChurnNeverTakeABlockWithAnAddressInIt() throws Exception {
    NodeFixture.Node other = fixture.node("node-b", 9);
    PoolView small = AllocatorTest.pool("p4", "10.0.0.0/24", 29, 0);
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger released = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(10);
    List<Future<?>> work = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      NodeFixture.Node mine = t % 2 == 0 ? node : other;
      int base = t * 1000;
      work.add(
          threads.submit(
              () -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                // At least 300 calls each, and on until blocks have gone back while pods churn.
                for (int i = 0;
                    i < 300 || (released.get() < 10 && System.nanoTime() < deadline);
                    i++) {
                  int id = base + ThreadLocalRandom.current().nextInt(5);
                  try {
                    if (ThreadLocalRandom.current().nextBoolean()) {
                      mine.add(small, id);
                    } else {
                      mine.del(small, id);
                    }
                  } catch (AllocationException expected) {
                    // blocks are being taken away; the runtime would retry
                  }
                }
              }));
    }
    for (NodeFixture.Node n : List.of(node, other)) {
      work.add(threads.submit(() -> answerAndRelease(n, running, released)));
    }
    for (Future<?> f : work.subList(0, 8)) {
      f.get(60, TimeUnit.SECONDS);
    }
    running.set(false);
    for (Future<?> f : work) {
      f.get(60, TimeUnit.SECONDS);
    }
    threads.shutdown();

    assertThat(released.get()).as("blocks went back during the churn").isPositive();
  }

  /** Plays the operator for {@code n}'s blocks, and runs its responder. */
  private void answerAndRelease(NodeFixture.Node n, AtomicBoolean running, AtomicInteger released) {
    int round = 0;
    while (running.get()) {
      round++;
      String requestedAt = "round-" + round;
      List<BlockRef> asked = new ArrayList<>();
      for (Cidr cidr : n.ledger.blocks().ownBlocks("p4")) {
        BlockRef ref = n.block("p4", cidr);
        if (ThreadLocalRandom.current().nextInt(3) == 0
            && fixture.status.request(ref, requestedAt)) {
          asked.add(ref);
        }
      }
      n.responder.respond();
      for (BlockRef ref : asked) {
        if (fixture.status.deleteIfReady(ref, requestedAt)) {
          released.incrementAndGet();
        } else {
          fixture.status.clear(ref);
        }
      }
    }
  }
}
