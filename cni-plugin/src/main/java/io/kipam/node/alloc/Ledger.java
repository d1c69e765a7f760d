package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One node's address book: every IPAddress object of this node (by namespace and UID), the
 * addresses reserved by allocations in flight, the addresses whose state is uncertain, and when
 * each address was last released. Its blocks side ({@link #blocks()}, {@link LedgerBlocks}) holds
 * the blocks this node holds and the blocks anyone holds. Both are fed by the node's watches and by
 * the allocator's own writes, and are the only mutable state of allocation; every method of either
 * holds this object's monitor, so a pick and its reservation are atomic, while API calls happen
 * outside it. The records it keeps do no locking of their own: only it calls them.
 *
 * <p>The rule that keeps one holder per address across namespaces: an address is free only when no
 * object this node knows of holds it, no allocation is writing it, no write of it has an unknown
 * outcome, and it is not resting after a release. An event about an object changes only that
 * object's record — a replayed delete of an old holder never frees an address a new holder has.
 */
public final class Ledger {

  private final String node;
  private final Clock clock;
  private final NodeBlocks blocks = new NodeBlocks();
  private final SharedSlots shared = new SharedSlots();
  private final LedgerBlocks blockSide = new LedgerBlocks(this, blocks, shared);
  private final AddressObjects objects = new AddressObjects();
  private final ForeignObjects foreign = new ForeignObjects(AddressObjects.MAX_TOMBSTONES);
  private final Set<AddressKey> reserved = new HashSet<>();
  private final UncertainWrites uncertain = new UncertainWrites();
  private final RestingAddresses resting = new RestingAddresses();
  private boolean synced;
  private ReleaseListener releaseListener = (pool, ip, at) -> {};

  /** Told of every release, so it can outlive the process (see {@code ReleaseJournal}). */
  @FunctionalInterface
  public interface ReleaseListener {
    void released(String pool, IpAddress ip, Instant at);
  }

  /** A reserved address and the block it is in. */
  public record Pick(Cidr block, IpAddress ip) {}

  public Ledger(String node, Clock clock) {
    this.node = node;
    this.clock = clock;
  }

  public String node() {
    return node;
  }

  /** The blocks side: what the block watches feed and the block decisions, under this monitor. */
  public LedgerBlocks blocks() {
    return blockSide;
  }

  public synchronized void onRelease(ReleaseListener listener) {
    this.releaseListener = listener;
  }

  /** A release from before this process started, so its address still rests as it should. */
  public synchronized void restoreRelease(String pool, IpAddress ip, Instant at) {
    resting.rest(new AddressKey(pool, ip), at);
  }

  // ---- fed by the watches ----

  /** A pool's reuse delay, from the pool watch: {@link RestingAddresses#poolSeen}. */
  public synchronized void poolSeen(String pool, Duration reuseDelay) {
    resting.poolSeen(pool, reuseDelay);
  }

  public synchronized void poolGone(String pool) {
    resting.poolGone(pool);
  }

  /** An IPAddress object exists: {@link AddressObjects#seen}. */
  public synchronized void leaseSeen(Lease lease) {
    objects.seen(lease, clock.instant());
  }

  /** An IPAddress object this node cannot read holds {@code address} while it exists. */
  public synchronized void unreadableSeen(AddressKey address, ObjectRef ref) {
    objects.unreadableSeen(address, ref);
  }

  /**
   * The object {@code ref} is gone ({@link AddressObjects#gone}); a last holder's address rests.
   */
  public synchronized void objectGone(AddressKey address, ObjectRef ref) {
    foreign.gone(ref);
    // The claim the object held the address for: it stays that claim's while the address rests.
    String claim = objects.lease(address, ref).map(Ledger::claimOf).orElse(null);
    if (objects.gone(address, ref) && !uncertain.contains(address)) {
      rest(address, claim);
    }
  }

  /** The IPAMClaim ({@code namespace/name}) {@code lease} holds its address for, or null. */
  private static String claimOf(Lease lease) {
    return lease.claim() == null ? null : lease.pod().namespace() + "/" + lease.claim();
  }

  public synchronized void markSynced() {
    synced = true;
  }

  public synchronized boolean synced() {
    return synced;
  }

  // ---- used by the allocator ----

  /** What {@code attachment} holds, in any pool. */
  public synchronized List<Lease> leasesOf(Attachment attachment) {
    return objects.leasesOf(attachment);
  }

  public synchronized Optional<Lease> leaseOf(String pool, Attachment attachment) {
    return objects.leaseOf(pool, attachment);
  }

  /**
   * Whether this node has known {@code lease}'s object for {@code age}: see {@link AddressObjects}.
   */
  public synchronized boolean olderThan(Lease lease, Duration age) {
    return objects.olderThan(lease.object(), age, clock.instant());
  }

  /** Every readable IPAddress object of this node (not the foreign ones it has met). */
  public synchronized List<Lease> leases() {
    return objects.leases(foreign::contains);
  }

  /** A fresh read found another node's object holding an address: see {@link ForeignObjects}. */
  public synchronized void foreignSeen(Lease lease) {
    leaseSeen(lease);
    if (objects.holds(lease)) {
      foreign.seen(lease, clock.instant());
    }
  }

  /** An object a fresh read found: this node's is recorded as usual, another's as foreign. */
  public synchronized void found(Lease object) {
    if (node.equals(object.node())) {
      leaseSeen(object);
    } else {
      foreignSeen(object);
    }
  }

  /** The foreign objects due for another read: {@link ForeignObjects#due}. */
  public synchronized List<Lease> foreignDue(Duration every) {
    return foreign.due(every, clock.instant());
  }

  /** {@code lease}'s address is about to be released: recorded first, so no restart loses it. */
  public synchronized void releasing(Lease lease) {
    Instant now = clock.instant();
    resting.rest(lease.address(), now, claimOf(lease));
    releaseListener.released(lease.pool(), lease.ip(), now);
  }

  /**
   * Picks a free address in this node's open blocks of {@code pool} and reserves it: the least
   * recently released first ({@link PickStrategy#leastRecentlyReleased}).
   */
  public synchronized Optional<Pick> reserveFree(PoolView pool, Random random) {
    resting.poolSeen(pool.name(), pool.reuseDelay());
    List<Cidr> open = blocks.openBlocks(pool.name(), pool.layout());
    Predicate<IpAddress> free = free(pool, clock.instant());
    Optional<Pick> pick =
        PickStrategy.leastRecentlyReleased(
            pool.layout(),
            open,
            free,
            ip -> resting.releasedAt(new AddressKey(pool.name(), ip)),
            random);
    return reserve(pool, pick);
  }

  /** What reserving one chosen address found. */
  public enum Exact {
    /** Reserved: it is free and in a block of this node that is open (or in {@code block}). */
    RESERVED,
    /** Held, being written, uncertain or sub-claimed: see {@link #holderOf}. */
    TAKEN,
    /** Released a moment ago and resting for the pool's reuse delay: see {@link #restLeft}. */
    RESTING,
    /** Not in a block this node may allocate it from. */
    NOT_OWN
  }

  /**
   * Reserves the chosen address {@code ip} of {@code pool}: when it is free, in one of this node's
   * open blocks of the pool or in its own host-prefix block {@code host} (a sub-claim just made).
   */
  public synchronized Exact reserveExact(PoolView pool, IpAddress ip, Cidr host) {
    resting.poolSeen(pool.name(), pool.reuseDelay());
    AddressKey key = new AddressKey(pool.name(), ip);
    boolean own =
        host != null
            ? blocks.get(pool.name(), host) != null
            : blocks.openBlocks(pool.name(), pool.layout()).stream().anyMatch(b -> b.contains(ip));
    if (!own) {
      return Exact.NOT_OWN;
    }
    boolean free =
        !objects.taken(key)
            && !reserved.contains(key)
            && !uncertain.contains(key)
            && (host != null || !shared.subClaimed(key));
    if (!free) {
      return Exact.TAKEN;
    }
    if (resting.resting(key, pool.reuseDelay(), clock.instant())) {
      return Exact.RESTING;
    }
    reserved.add(key);
    return Exact.RESERVED;
  }

  /**
   * How long {@code ip} of {@code pool} still rests after its last release this node knows of (the
   * pool's reuse delay); empty when it does not rest.
   */
  public synchronized Optional<Duration> restLeft(PoolView pool, IpAddress ip) {
    return restLeft(pool, ip, null);
  }

  /**
   * As {@link #restLeft(PoolView, IpAddress)}, for a new holder: empty when the address was last
   * released by IPAMClaim {@code claim} ({@code namespace/name}), whose address it stays.
   */
  public synchronized Optional<Duration> restLeft(PoolView pool, IpAddress ip, String claim) {
    resting.poolSeen(pool.name(), pool.reuseDelay());
    AddressKey key = new AddressKey(pool.name(), ip);
    Instant now = clock.instant();
    if (!resting.resting(key, pool.reuseDelay(), now)
        || (claim != null && claim.equals(resting.releasedBy(key)))) {
      return Optional.empty();
    }
    return Optional.of(Duration.between(now, resting.releasedAt(key).plus(pool.reuseDelay())));
  }

  /** Whether this call's reservation of {@code address} stands (see {@link #reserveFree}). */
  public synchronized boolean reserved(AddressKey address) {
    return reserved.contains(address);
  }

  /** The lease of the object this node knows to hold {@code address}, if any. */
  public synchronized Optional<Lease> holderOf(AddressKey address) {
    return objects.holderOf(address);
  }

  /** Picks a free address of a usable Shared slot of {@code pool} at random, and reserves it. */
  public synchronized Optional<Pick> reserveShared(PoolView pool, Random random) {
    Predicate<IpAddress> free = free(pool, clock.instant());
    List<Cidr> slots =
        shared.usable(pool.name(), pool.layout().blockSize()).stream()
            .map(SharedSlots.Slot::cidr)
            .toList();
    return reserve(pool, PickStrategy.atRandom(pool.layout(), slots, free, random));
  }

  private Optional<Pick> reserve(PoolView pool, Optional<Pick> pick) {
    pick.ifPresent(p -> reserved.add(new AddressKey(pool.name(), p.ip())));
    return pick;
  }

  /** Not held, reserved, uncertain, sub-claimed, nor resting after a release. */
  private Predicate<IpAddress> free(PoolView pool, Instant now) {
    return ip -> {
      AddressKey key = new AddressKey(pool.name(), ip);
      return !objects.taken(key)
          && !reserved.contains(key)
          && !uncertain.contains(key)
          && !shared.subClaimed(key)
          && !resting.resting(key, pool.reuseDelay(), now);
    };
  }

  /** The allocation of a reserved address is written: it becomes a lease. */
  public synchronized void commit(Lease lease) {
    reserved.remove(lease.address());
    leaseSeen(lease);
  }

  /** The allocation of a reserved address certainly did not happen: it is free again. */
  public synchronized void unreserve(AddressKey address) {
    reserved.remove(address);
    blocks.giveBackHost(address);
  }

  /** The write of a reserved address may have happened: see {@link UncertainWrites#add}. */
  public synchronized void uncertain(Lease wanted, boolean nameTaken) {
    reserved.remove(wanted.address());
    uncertain.add(wanted, nameTaken, clock.instant());
  }

  /**
   * An earlier write for {@code attachment} with an unknown outcome: {@link UncertainWrites#of}.
   */
  public synchronized Optional<Uncertain> uncertainOf(String pool, Attachment attachment) {
    return uncertain.of(pool, attachment);
  }

  /** The uncertain addresses that have been uncertain for at least {@code age}. */
  public synchronized List<Uncertain> uncertainFor(Duration age) {
    return uncertain.since(clock.instant().minus(age));
  }

  /** Whether {@code u} is still the uncertain write of its address: nothing has settled it. */
  public synchronized boolean stillUncertain(Uncertain u) {
    return uncertain.is(u);
  }

  /** A fresh read settled {@code u}: with no object holding it, the address rests. */
  public synchronized void settled(Uncertain u) {
    if (uncertain.settled(u) && !objects.held(u.wanted().address())) {
      rest(u.wanted().address(), claimOf(u.wanted()));
    }
  }

  /** An ADD returned {@code lease} to the runtime: see {@link UncertainWrites#adopted}. */
  public synchronized void adopted(Lease lease) {
    uncertain.adopted(lease);
  }

  /** A lease this node deleted itself: gone, and no late event revives it. */
  public synchronized void released(Lease lease) {
    objectGone(lease.address(), lease.object());
    objects.deleted(lease.object(), clock.instant());
  }

  /** Sizes of the ledger's bounded records, for tests and benchmarks. */
  public synchronized Map<String, Integer> sizes() {
    Map<String, Integer> sizes = new HashMap<>(objects.sizes());
    sizes.put("foreign", foreign.size());
    sizes.put("resting", resting.size());
    sizes.put("uncertain", uncertain.size());
    sizes.put("reserved", reserved.size());
    return Map.copyOf(sizes);
  }

  /** Held by an object (readable or not), reserved, or uncertain. Callers hold the monitor. */
  Set<AddressKey> inUse() {
    Set<AddressKey> keys = new HashSet<>();
    objects.addTakenTo(keys);
    keys.addAll(reserved);
    keys.addAll(uncertain.addresses());
    return keys;
  }

  Set<AddressKey> restingAddresses() {
    return resting.allRestingAt(clock.instant());
  }

  Predicate<AddressKey> restingNow() {
    return resting.restingAt(clock.instant());
  }

  Instant now() {
    return clock.instant();
  }

  /**
   * An address's last holder went: it rests, and a host-prefix block of it goes back once idle.
   * {@code claim}: the IPAMClaim it was held for (null: a pod's, or not known).
   */
  private void rest(AddressKey address, String claim) {
    Instant now = clock.instant();
    NodeBlocks.Own own = blocks.containing(address);
    if (own != null && own.ref().hostPrefix()) {
      own.giveBack = true;
    }
    resting.rest(address, now, claim);
    releaseListener.released(address.pool(), address.ip(), now);
  }
}
