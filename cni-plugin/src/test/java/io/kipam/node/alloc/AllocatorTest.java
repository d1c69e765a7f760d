package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.cni.spec.Attachment;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AllocatorTest {

  private final long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
  private final MutableClock clock = new MutableClock();
  private final FakeStore store = new FakeStore();
  private final Ledger ledger = new Ledger("node-a", clock);
  private final Random random = new Random(seed);
  private final BlockClaims claims = new BlockClaims(ledger, store, random);
  private final Allocator allocator =
      new Allocator(
          ledger, store, Allocator.NO_CLAIMS, null, random, Allocator.DEFAULT_SETTLE_AFTER, claims);
  private final List<Ledger> ledgers = new ArrayList<>(List.of(ledger));

  AllocatorTest() {
    System.out.println("seed " + seed + " (-Dkipam.seed=" + seed + " repeats it)");
    ledger.markSynced();
  }

  @AfterEach
  void invariantsHold() {
    Invariants.check(store, ledgers);
  }

  static PoolView pool(String name, String cidr, int blockSize, int reuseDelaySeconds) {
    return new PoolView(
        name,
        PoolLayout.builder().cidr(cidr).blockSize(blockSize).build(),
        Duration.ofSeconds(reuseDelaySeconds),
        0);
  }

  private static Attachment attachment(int i) {
    return new Attachment("container-" + i, "eth0");
  }

  /**
   * Pods are spread over three namespaces: an IPAddress name is unique only within a namespace, so
   * in one namespace a 409 would hide every bug that gives an address to two pods.
   */
  private static PodRef pod(int i) {
    return new PodRef("q" + Math.floorMod(i, 3), "pod-" + i, "uid-" + i);
  }

  /** The addresses of {@code count} ADDs to {@code pool}, of attachments 0 to count - 1. */
  private Set<IpAddress> addresses(PoolView pool, int count) {
    Set<IpAddress> ips = new HashSet<>();
    for (int i = 0; i < count; i++) {
      ips.add(add(pool, i).ip());
    }
    return ips;
  }

  /**
   * The lease an ADD of attachment 0 wrote though its answer was lost: the ADD fails with an
   * unknown outcome and the store holds the object.
   */
  private Lease addWithLostAnswer(PoolView pool) {
    store.lostAnswers = 1.0;
    assertThatThrownBy(() -> add(pool, 0)).isInstanceOf(WriteOutcomeUnknownException.class);
    store.lostAnswers = 0;
    return store.addresses.values().iterator().next();
  }

  private Lease add(PoolView pool, int i) {
    return allocator
        .allocate(AddRequest.dynamic(List.of(pool), attachment(i), pod(i), NETWORK, null))
        .get(0);
  }

  private void del(String pool, int i) {
    allocator.release(List.of(pool), attachment(i), Optional.empty());
  }

  private static final String NETWORK = "net-a";

  @Test
  void firstAllocationClaimsABlockAndTakesAnAddressInIt() {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);

    Lease lease = add(pool, 1);

    assertThat(ledger.blocks().ownBlocks("p4")).containsExactly(lease.block());
    assertThat(lease.block().contains(lease.ip())).isTrue();
    assertThat(store.addresses).hasSize(1);
  }

  @Test
  void repeatedAddOfOneAttachmentReturnsTheSameAddressWithoutWriting() {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);
    Lease first = add(pool, 1);
    int writes = store.writes.get();

    assertThat(add(pool, 1)).isEqualTo(first);
    assertThat(store.writes.get()).isEqualTo(writes);
  }

  @Test
  void steadyStateAllocationIsOneWrite() {
    PoolView pool = pool("p4", "10.0.0.0/24", 26, 0);
    add(pool, 0);
    int writes = store.writes.get();

    for (int i = 1; i <= 20; i++) {
      add(pool, i);
    }

    assertThat(store.writes.get() - writes).isEqualTo(20);
  }

  /**
   * An IPv6 /64 whose range holds 48 addresses in 3 slots serves at once, as the same range in a
   * /112 does: slots are looked for in the range, not sampled over the 2^60 slots of the CIDR.
   */
  @Test
  void aSmallRangeInAHugePoolServesEveryAddressOfIt() {
    PoolView huge =
        new PoolView(
            "p6",
            PoolLayout.builder()
                .cidr("fd00:0:0:7::/64")
                .blockSize(124)
                .rangeStart("fd00:0:0:7::a000")
                .rangeEnd("fd00:0:0:7::a02f")
                .build(),
            Duration.ZERO,
            0,
            3,
            null);
    Set<IpAddress> ips = addresses(huge, 48);
    assertThat(ips).hasSize(48).allMatch(ip -> huge.layout().isAssignable(ip));
  }

  @Test
  void aFullBlockLeadsToAnotherBlock() {
    PoolView pool = pool("p4", "10.0.0.0/24", 30, 0);
    Set<IpAddress> ips = addresses(pool, 10);
    assertThat(ips).hasSize(10);
    assertThat(ledger.blocks().ownBlocks("p4")).hasSizeGreaterThanOrEqualTo(3);
  }

  @Test
  void releasedAddressRestsForTheReuseDelayThenComesBackFirst() {
    PoolView pool = pool("p4", "10.0.0.0/30", 30, 30);
    Lease a = add(pool, 1);
    Lease b = add(pool, 2);
    del("p4", 1);

    // Not counted by kipam-operator: try again, never "exhausted" (NoAddressTest).
    assertThatThrownBy(() -> add(pool, 3))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_SHORT));
    clock.advance(Duration.ofSeconds(31));
    assertThat(add(pool, 3).ip()).isEqualTo(a.ip());
    assertThat(b.ip()).isNotEqualTo(a.ip());
  }

  @Test
  void noReachableAddressIsShortWhileThePoolCountsFreeOnesAndExhaustedOnlyWhenItCountsNone() {
    PoolView pool = pool("p4", "10.0.0.0/30", 30, 30);
    add(pool, 1);
    add(pool, 2);
    del("p4", 1); // resting: free in kipam-operator's count, not yet reusable here

    assertThatThrownBy(
            () ->
                add(
                    pool.withAvailable(java.math.BigInteger.ONE)
                        .withCount(java.time.Instant.EPOCH, null),
                    3))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_SHORT);
              assertThat(e.getMessage())
                  .contains("pool p4 has 1 free addresses")
                  .contains("try again");
            });
    assertThatThrownBy(
            () ->
                add(
                    pool.withAvailable(java.math.BigInteger.ZERO)
                        .withCount(java.time.Instant.EPOCH, null),
                    3))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_EXHAUSTED));
    assertThatThrownBy(() -> add(pool, 3))
        .as("unknown count: never exhausted before kipam-operator has counted")
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_SHORT));
  }

  @Test
  void leastRecentlyReleasedAddressIsReusedFirst() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      leases.add(add(pool, i));
    }
    del("p4", 4);
    clock.advance(Duration.ofSeconds(1));
    del("p4", 2);

    assertThat(add(pool, 10).ip()).isEqualTo(leases.get(4).ip());
    assertThat(add(pool, 11).ip()).isEqualTo(leases.get(2).ip());
  }

  @Test
  void releaseOfAnUnknownAttachmentSucceedsAndTouchesNothing() {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);
    add(pool, 1);

    del("p4", 99);
    del("p4", 1);
    del("p4", 1);

    assertThat(store.addresses).isEmpty();
  }

  @Test
  void staleReleaseNeverRemovesAnAddressReissuedToAnotherAttachment() {
    PoolView pool = pool("p4", "10.0.0.0/30", 30, 0);
    Lease first = add(pool, 1);
    add(pool, 2);
    del("p4", 1);
    Lease reissued = add(pool, 3);
    assertThat(reissued.ip()).isEqualTo(first.ip());

    del("p4", 1);

    assertThat(store.addresses.values()).extracting(Lease::attachment).contains(attachment(3));
  }

  @Test
  void dualStackIsAllOrNothing() {
    PoolView v4 = pool("p4", "10.0.0.0/24", 28, 0);
    PoolView v6 =
        pool("p6", "fd00::/126", 126, 0)
            .withAvailable(java.math.BigInteger.ZERO)
            .withCount(java.time.Instant.EPOCH, null);
    allocator.allocate(AddRequest.dynamic(List.of(v4, v6), attachment(1), pod(1), NETWORK, null));
    allocator.allocate(AddRequest.dynamic(List.of(v4, v6), attachment(2), pod(2), NETWORK, null));
    allocator.allocate(AddRequest.dynamic(List.of(v6), attachment(3), pod(3), NETWORK, null));
    int before = store.addresses.size();

    assertThatThrownBy(
            () ->
                allocator.allocate(
                    AddRequest.dynamic(List.of(v4, v6), attachment(5), pod(5), NETWORK, null)))
        .isInstanceOf(AllocationException.class)
        .hasMessageContaining("pool p6 is exhausted");
    assertThat(store.addresses).hasSize(before);
    assertThat(ledger.leaseOf("p4", attachment(5))).isEmpty();
  }

  @Test
  void unreachableApiLeavesNothingReservedOrLeased() {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);
    add(pool, 1);
    store.failWrites = true;

    assertThatThrownBy(() -> add(pool, 2)).isInstanceOf(StoreUnavailableException.class);

    store.failWrites = false;
    assertThat(ledger.leaseOf("p4", attachment(2))).isEmpty();
    assertThat(add(pool, 2).ip()).isNotNull();
  }

  @Test
  void nothingIsHandedOutBeforeTheLedgerIsSynced() {
    Ledger fresh = new Ledger("node-b", clock);
    Allocator notReady = new Allocator(fresh, store, new Random(1));

    assertThatThrownBy(
            () ->
                notReady.allocate(
                    AddRequest.dynamic(
                        List.of(pool("p4", "10.0.0.0/24", 28, 0)),
                        attachment(1),
                        pod(1),
                        NETWORK,
                        null)))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.NOT_READY));
  }

  @Test
  void anExhaustedPoolCountsOnlyTheBlocksItsRangeLeavesUsable() {
    // 64 addresses in a /25 of /28 blocks: four of its eight blocks hold assignable addresses.
    PoolView pool =
        new PoolView(
            "p4",
            PoolLayout.builder()
                .cidr("10.0.0.0/25")
                .rangeStart("10.0.0.32")
                .rangeEnd("10.0.0.95")
                .blockSize(28)
                .build(),
            Duration.ZERO,
            0);
    for (int i = 0; i < 64; i++) {
      add(pool, i);
    }

    assertThatThrownBy(() -> add(pool, 64))
        .hasMessageContaining("the pool has 64 assignable addresses in 4 blocks");
  }

  @Test
  void blockCapStopsClaimsWithAMessageNamingTheField() {
    PoolView capped =
        new PoolView(
            "p4", PoolLayout.builder().cidr("10.0.0.0/24").blockSize(30).build(), Duration.ZERO, 1);
    // One /30 block holds at most four addresses; the fifth needs a second block.
    assertThatThrownBy(
            () -> {
              for (int i = 1; i <= 5; i++) {
                add(capped, i);
              }
            })
        .isInstanceOf(AllocationException.class)
        .hasMessageContaining("spec.maxBlocksPerNode (1)");
  }

  @Test
  void twoNodesThatCannotSeeEachOtherStillNeverShareABlockOrAnAddress() {
    Ledger other = new Ledger("node-b", clock);
    other.markSynced();
    ledgers.add(other);
    Allocator otherAllocator = new Allocator(other, store, new Random(7));
    PoolView pool = pool("p4", "10.0.0.0/26", 29, 0);

    Set<IpAddress> ips = new HashSet<>();
    for (int i = 0; i < 12; i++) {
      ips.add(add(pool, i).ip());
      ips.add(
          otherAllocator
              .allocate(
                  AddRequest.dynamic(
                      List.of(pool), attachment(100 + i), pod(100 + i), NETWORK, null))
              .get(0)
              .ip());
    }

    assertThat(ips).hasSize(24);
  }

  @Test
  void hugeIpv6BlocksArePickedAtRandomWithoutListing() {
    PoolView pool = pool("p6", "fd00::/48", 64, 0);
    Set<IpAddress> ips = addresses(pool, 50);
    assertThat(ips).hasSize(50);
    assertThat(ledger.blocks().ownBlocks("p6")).hasSize(1);
  }

  @Test
  void concurrentAddsAndDelsNeverGiveOneAddressToTwoAttachments() throws Exception {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);
    ExecutorService threads = Executors.newFixedThreadPool(32);
    List<Future<?>> work = new ArrayList<>();
    for (int t = 0; t < 32; t++) {
      int base = t * 1000;
      Random random = new Random(seed + t);
      work.add(
          threads.submit(
              () -> {
                for (int i = 0; i < 50; i++) {
                  int id = base + random.nextInt(4);
                  if (random.nextBoolean()) {
                    add(pool, id);
                  } else {
                    del("p4", id);
                  }
                }
              }));
    }
    for (Future<?> f : work) {
      f.get(60, TimeUnit.SECONDS);
    }
    threads.shutdown();
  }

  /**
   * An ADD that finds the node's blocks full just as another ADD's block claim finishes: it claims
   * a block of its own. Under concurrent ADDs this is what a claimer preempted between finishing
   * its claim and leaving the record of claims in flight looks like to the ADDs it wakes; an ADD
   * that met that finished claim again took it for one in flight, "waited" for it without waiting,
   * and went round until its rounds ran out, refusing the pool as exhausted with most of it free.
   * Here the late ADDs run exactly in that moment: as the first claim's waiters are told it is
   * done.
   */
  @Test
  void anAddThatNeedsABlockAsAnotherClaimFinishesClaimsOneInsteadOfGivingUp() {
    PoolView pool = pool("p4", "10.0.0.0/24", 30, 0);
    List<Lease> late = new ArrayList<>();
    AtomicReference<CompletableFuture<Void>> asTheClaimFinishes = new AtomicReference<>();
    store.onClaim =
        first -> {
          if (asTheClaimFinishes.get() != null) {
            return;
          }
          CompletableFuture<Void> claim = claims.inFlight("p4").orElseThrow();
          asTheClaimFinishes.set(
              claim.thenRun(
                  () -> {
                    // The first ADD has not reserved yet: the late ones take its whole block, and
                    // the last of them needs another.
                    int inTheBlock = 0;
                    for (IpAddress ignored : pool.layout().assignable(first.cidr())) {
                      inTheBlock++;
                    }
                    for (int i = 1; i <= inTheBlock + 1; i++) {
                      late.add(add(pool, i));
                    }
                  }));
        };

    Lease firstLease = add(pool, 0);

    assertThat(asTheClaimFinishes.get()).succeedsWithin(Duration.ofSeconds(5));
    assertThat(ledger.blocks().ownBlocks("p4")).hasSize(2);
    Set<IpAddress> ips = new HashSet<>(late.stream().map(Lease::ip).toList());
    ips.add(firstLease.ip());
    assertThat(ips).hasSize(late.size() + 1);
  }

  @Test
  void concurrentAddsOfOneAttachmentYieldOneAddress() throws Exception {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    List<Future<Lease>> adds = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      adds.add(threads.submit(() -> add(pool, 42)));
    }
    Set<IpAddress> ips = new HashSet<>();
    for (Future<Lease> f : adds) {
      ips.add(f.get(30, TimeUnit.SECONDS).ip());
    }
    threads.shutdown();

    assertThat(ips).hasSize(1);
    assertThat(store.addresses).hasSize(1);
  }

  @Test
  void replayedDeleteOfAnOldHolderNeverFreesTheNewHoldersAddress() {
    PoolView pool = pool("p4", "10.0.0.4/32", 32, 0);
    // H (namespace q0) holds the pool's first address, releases it, and N (q1) gets it.
    Lease h = add(pool, 0);
    del("p4", 0);
    Lease n = add(pool, 1);
    assertThat(n.ip()).isEqualTo(h.ip());
    assertThat(n.pod().namespace()).isNotEqualTo(h.pod().namespace());

    // A reconnecting watch replays the delete of H's object.
    ledger.objectGone(h.address(), h.object());

    assertThat(ledger.leaseOf("p4", attachment(1))).contains(n);
    assertThatThrownBy(() -> add(pool, 2)).isInstanceOf(AllocationException.class);
    del("p4", 1);
    assertThat(store.addresses).isEmpty();
    assertThat(add(pool, 2).ip()).isEqualTo(n.ip());
  }

  @Test
  void lateWatchEventOfAnObjectThisNodeDeletedDoesNotReviveIt() {
    PoolView pool = pool("p4", "10.0.0.4/32", 32, 0);
    Lease h = add(pool, 0);
    del("p4", 0);

    ledger.leaseSeen(h);

    assertThat(ledger.leaseOf("p4", attachment(0))).isEmpty();
    assertThat(add(pool, 3).ip()).isEqualTo(h.ip());
  }

  /** An object of {@code node} holding {@code ip} of {@code first}'s block in namespace q1. */
  private static Lease heldInQ1(IpAddress ip, Lease first, String node) {
    return new Lease(
        "p4",
        ip,
        first.block(),
        node,
        NETWORK,
        new Attachment("other-" + ip, "eth0"),
        new PodRef("q1", "other", "uid-x"),
        null,
        null);
  }

  @Test
  void aNameTakenInTheSameNamespaceMovesToAnotherAddressAndKeepsItTaken() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    Lease first = add(pool, 0);
    // Every other address of the block is held in namespace q1 by objects this node never saw.
    List<Lease> foreign = new ArrayList<>();
    for (IpAddress ip : pool.layout().assignable(first.block())) {
      if (!ip.equals(first.ip()) && foreign.size() < 4) {
        foreign.add(store.foreign(heldInQ1(ip, first, "node-a")));
      }
    }

    Lease mine = add(pool, 1);

    assertThat(foreign).extracting(Lease::ip).doesNotContain(mine.ip());
    // The foreign objects are settled by a fresh read: recorded as theirs, never handed out.
    allocator.settle(Duration.ZERO);
    assertThat(ledger.sizes().get("uncertain")).isZero();
    assertThat(ledger.leases())
        .extracting(Lease::ip)
        .containsAll(
            foreign.stream().filter(f -> !f.ip().equals(mine.ip())).map(Lease::ip).toList());
  }

  /**
   * A 409 from objects of another node, which no watch of this node shows: settled by a fresh read
   * as foreign, taken while they exist, and free again once a later read finds them gone, without a
   * restart.
   */
  @Test
  void namesHeldByAnotherNodesObjectsAreFreeAgainOnceThoseObjectsGo() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    Lease first = add(pool, 0);
    List<Lease> foreign = new ArrayList<>();
    for (IpAddress ip : pool.layout().assignable(first.block())) {
      if (!ip.equals(first.ip())) {
        foreign.add(store.foreign(heldInQ1(ip, first, "node-b")));
      }
    }
    // Pod 1 lives in q1, where every other address's name is taken.
    assertThatThrownBy(() -> add(pool, 1)).isInstanceOf(AllocationException.class);
    allocator.settle(Duration.ZERO);
    assertThat(ledger.sizes().get("uncertain")).isZero();
    assertThat(ledger.sizes().get("foreign")).isEqualTo(foreign.size());
    assertThat(ledger.leases()).as("another node's objects are not this node's leases").hasSize(1);
    assertThatThrownBy(() -> add(pool, 4)).as("taken in every namespace while they exist");

    foreign.forEach(store::deleteAddress);
    allocator.recheckForeign(Duration.ZERO);

    assertThat(ledger.sizes().get("foreign")).isZero();
    Lease mine = add(pool, 1);
    assertThat(foreign).extracting(Lease::ip).contains(mine.ip());
  }

  @Test
  void anAttachmentEndedAfterSomeoneElseDeletedItsObjectRestsThenIsFree() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 30);
    Lease lease = add(pool, 0);

    allocator.endAttachment(lease);

    assertThat(ledger.leaseOf("p4", attachment(0))).isEmpty();
    assertThat(store.addresses).isEmpty();
    for (int i = 1; i < 6; i++) {
      assertThat(add(pool, i).ip()).as("resting for the reuse delay").isNotEqualTo(lease.ip());
    }
    clock.advance(Duration.ofSeconds(31));
    del("p4", 1);
    clock.advance(Duration.ofSeconds(1));
    assertThat(add(pool, 6).ip()).as("rested longest").isEqualTo(lease.ip());
  }

  @Test
  void aStaleEndOfAnAttachmentChangesNothingOfItsNewObject() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    Lease old = add(pool, 0);
    del("p4", 0);
    Lease now = add(pool, 0);

    allocator.endAttachment(old);
    allocator.releaseFinished(old);

    assertThat(ledger.leaseOf("p4", attachment(0))).contains(now);
    assertThat(store.addresses).hasSize(1);
  }

  @Test
  void aFinishedPodsAddressIsReleased() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    Lease lease = add(pool, 0);
    add(pool, 1);

    allocator.releaseFinished(lease);

    assertThat(ledger.leaseOf("p4", attachment(0))).isEmpty();
    assertThat(store.addresses).hasSize(1);
  }

  @Test
  void aWriteWithUnknownOutcomeKeepsItsAddressTakenInEveryNamespaceUntilSettled() {
    PoolView pool = pool("p4", "10.0.0.0/30", 30, 0);
    Lease written = addWithLostAnswer(pool);

    // Pods of the other two namespaces get the other address, never the uncertain one.
    Lease other = add(pool, 1);
    assertThat(other.ip()).isNotEqualTo(written.ip());
    assertThatThrownBy(() -> add(pool, 2)).isInstanceOf(AllocationException.class);

    // The fresh read finds the object of the failed ADD and deletes it: nothing is left behind.
    allocator.settle(Duration.ZERO);
    assertThat(store.addresses.values()).containsOnly(other);
    assertThat(add(pool, 2).ip()).isEqualTo(written.ip());
  }

  @Test
  void aRetriedAddAdoptsTheObjectItsLostAnswerCreated() {
    PoolView pool = pool("p4", "10.0.0.0/30", 30, 0);
    Lease written = addWithLostAnswer(pool);
    ledger.leaseSeen(written); // the node's watch delivers the object

    assertThat(add(pool, 0)).isEqualTo(written);
    allocator.settle(Duration.ZERO);

    assertThat(store.addresses.values()).containsOnly(written);
    assertThat(ledger.sizes().get("uncertain")).isZero();
  }

  @Test
  void aRetryBeforeTheWatchShowsTheLostWriteGetsTheSameAddressAndNoSecondOne() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    Lease written = addWithLostAnswer(pool);

    // The runtime retries at once; the node's watch has not delivered the object yet.
    Lease retried = add(pool, 0);
    allocator.settle(Duration.ZERO);

    assertThat(retried.ip()).isEqualTo(written.ip());
    assertThat(store.addresses.values()).extracting(Lease::ip).containsOnly(written.ip());
    del("p4", 0);
    assertThat(store.addresses).isEmpty();
  }

  @Test
  void aRetryWhileTheEarlierWriteMayStillLandIsToldToTryAgainUntilItIsSettled() {
    PoolView pool = pool("p4", "10.0.0.0/29", 29, 0);
    store.lostRequests = true;
    assertThatThrownBy(() -> add(pool, 0)).isInstanceOf(WriteOutcomeUnknownException.class);
    store.lostRequests = false;

    assertThatThrownBy(() -> add(pool, 0))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("may still be writing");
    assertThat(store.addresses).isEmpty();

    clock.advance(Allocator.DEFAULT_SETTLE_AFTER);
    Lease later = add(pool, 0);

    assertThat(store.addresses.values()).containsOnly(later);
    allocator.settle(Duration.ZERO);
    assertThat(ledger.sizes().get("uncertain")).isZero();
  }

  @Test
  void anUnsettledAddressStaysTakenWhileTheApiCannotBeRead() {
    PoolView pool = pool("p4", "10.0.0.0/30", 30, 0);
    Lease written = addWithLostAnswer(pool);
    store.failWrites = true;

    allocator.settle(Duration.ZERO);

    store.failWrites = false;
    assertThat(ledger.sizes().get("uncertain")).isOne();
    assertThat(add(pool, 1).ip()).isNotEqualTo(written.ip());
    allocator.settle(Duration.ZERO);
  }

  @Test
  void aBlockClaimWithUnknownOutcomeDoesNotLoseTheBlock() {
    // One block only: if a claim that never happened marked it taken, the pool would be lost.
    PoolView pool = pool("p4", "10.0.0.0/28", 28, 0);
    store.claimsTimeOut = true;
    assertThatThrownBy(() -> add(pool, 1)).isInstanceOf(WriteOutcomeUnknownException.class);
    store.claimsTimeOut = false;

    assertThat(add(pool, 1).block()).isEqualTo(pool.layout().block(java.math.BigInteger.ZERO));
  }

  @Test
  void aDelCarryingAnotherPodsIdentityReleasesNothing() {
    PoolView pool = pool("p4", "10.0.0.0/24", 28, 0);
    Lease b = add(pool, 1);

    allocator.release(List.of("p4"), attachment(1), Optional.of(new Allocator.PodName("q0", "a")));
    assertThat(store.addresses.values()).containsOnly(b);

    allocator.release(
        List.of("p4"),
        attachment(1),
        Optional.of(new Allocator.PodName(b.pod().namespace(), b.pod().name())));
    assertThat(store.addresses).isEmpty();
  }

  @Test
  void anAddTheApiRefusesLeavesNoBlockClaimedForIt() {
    PoolView pool = pool("p4", "10.0.0.0/24", 32, 0);
    store.rejectCreates = true;

    assertThatThrownBy(() -> add(pool, 1)).isInstanceOf(RequestRejectedException.class);

    assertThat(store.blocks).isEmpty();
    assertThat(ledger.blocks().ownBlocks("p4")).isEmpty();
    store.rejectCreates = false;
    add(pool, 1);
    assertThat(store.blocks).hasSize(1);
  }

  @Test
  void churnWithLostAnswersAcrossNamespacesNeverSharesAnAddress() throws Exception {
    Ledger other = new Ledger("node-b", clock);
    other.markSynced();
    ledgers.add(other);
    Allocator otherAllocator = new Allocator(other, store, new Random(seed + 1));
    PoolView pool = pool("p4", "10.0.0.0/26", 29, 0);
    store.lostAnswers = 0.2;
    ExecutorService threads = Executors.newFixedThreadPool(16);
    List<Future<?>> work = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      Allocator mine = t % 2 == 0 ? allocator : otherAllocator;
      int base = t * 1000;
      Random random = new Random(seed + t);
      work.add(
          threads.submit(
              () -> {
                for (int i = 0; i < 200; i++) {
                  int id = base + random.nextInt(6);
                  try {
                    if (random.nextBoolean()) {
                      mine.allocate(
                          AddRequest.dynamic(
                              List.of(pool), attachment(id), pod(id), NETWORK, null));
                    } else {
                      mine.release(List.of("p4"), attachment(id), Optional.empty());
                    }
                  } catch (WriteOutcomeUnknownException | AllocationException expected) {
                    // retried by the runtime in real life; here the next operation goes on
                  }
                  if (i % 20 == 0) {
                    mine.settle(Duration.ZERO);
                  }
                }
              }));
    }
    for (Future<?> f : work) {
      f.get(60, TimeUnit.SECONDS);
    }
    threads.shutdown();
    store.lostAnswers = 0;
    allocator.settle(Duration.ZERO);
    otherAllocator.settle(Duration.ZERO);

    assertThat(store.answersLost.get()).as("answers were lost").isPositive();
    assertThat(store.addresses.values())
        .extracting(l -> l.pod().namespace())
        .as("pods in three namespaces")
        .containsAnyOf("q0", "q1", "q2");
  }

  /** A clock tests move by hand. */
  static final class MutableClock extends Clock {
    private Instant now = Instant.parse("2026-01-01T00:00:00Z");

    void advance(Duration d) {
      now = now.plus(d);
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public synchronized Instant instant() {
      return now;
    }
  }
}
