package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.cni.spec.Attachment;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's record of its allocations: the blocks it holds, the blocks anyone holds, every
 * IPAddress object of this node (by namespace and UID), the addresses reserved by allocations in
 * flight, the addresses whose state is uncertain, and when each address was last released. It is
 * fed by the node's watches and by the allocator's own writes, and is the only mutable state of
 * allocation; every method holds its monitor, so a pick and its reservation are atomic, while API
 * calls happen outside it.
 *
 * <p>The rule that keeps one holder per address across namespaces: an address is free only when no
 * object this node knows of holds it, no allocation is writing it, no write of it has an unknown
 * outcome, and it is not resting after a release. An event about an object changes only that
 * object's record — a replayed delete of an old holder never frees an address a new holder has.
 */
public final class Ledger {

  private static final Logger log = LoggerFactory.getLogger(Ledger.class);

  /**
   * How long, and how many, objects this node deleted are remembered, so a late watch event cannot
   * revive one. The watch's own delete event ends each one within moments; the bounds only matter
   * while the watch is away.
   */
  static final Duration TOMBSTONE_TTL = Duration.ofMinutes(10);

  static final int MAX_TOMBSTONES = 4096;

  private final String node;
  private final Clock clock;
  private final NodeBlocks blocks = new NodeBlocks();
  private final SharedSlots shared = new SharedSlots();
  private final Set<AddressKey> subClaimsInDoubt = new HashSet<>();
  private final Map<AddressKey, Map<ObjectRef, Lease>> holders = new HashMap<>();
  private final Map<AddressKey, Set<ObjectRef>> unreadable = new HashMap<>();
  private final Map<AttachmentKey, Lease> byAttachment = new HashMap<>();
  private final Map<ObjectRef, Instant> firstSeen = new HashMap<>();
  private final Map<ObjectRef, Instant> tombstones = new LinkedHashMap<>();
  private final ForeignObjects foreign = new ForeignObjects(MAX_TOMBSTONES);
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

  /** An attachment's claim on a pool: at most one address each. */
  private record AttachmentKey(String pool, Attachment attachment) {}

  public Ledger(String node, Clock clock) {
    this.node = node;
    this.clock = clock;
  }

  public String node() {
    return node;
  }

  public synchronized void onRelease(ReleaseListener listener) {
    this.releaseListener = listener;
  }

  /** A release from before this process started, so its address still rests as it should. */
  public synchronized void restoreRelease(String pool, IpAddress ip, Instant at) {
    resting.rest(new AddressKey(pool, ip), at);
  }

  // ---- fed by the watches ----

  /** Someone holds {@code block} of {@code pool} (another node, or this one): claims skip it. */
  public synchronized void blockTaken(String pool, Cidr block) {
    blocks.take(pool, block);
  }

  /**
   * The node's block watch shows one of this node's blocks. Its release state takes effect at once:
   * from this moment nothing is allocated from a block kipam-operator is releasing ({@code
   * Requested} or {@code Ready}), until its status says otherwise. A host-prefix block seen before
   * the ledger has synced is checked once whether it should go back (its address may have gone
   * while no daemon ran).
   */
  public synchronized void ownBlockSeen(BlockObject object) {
    NodeBlocks.Own own = blocks.seen(object, clock.instant());
    if (own == null || !object.ref().hostPrefix()) {
      return;
    }
    AddressKey address = new AddressKey(object.ref().pool(), object.ref().cidr().network());
    if (!synced || subClaimsInDoubt.remove(address)) {
      own.giveBack = true;
    }
  }

  /**
   * The create of the sub-claim of {@code ip} may have happened (its answer was lost) and the ADD
   * that made it failed: if the node's block watch brings it, it goes back once its address is
   * neither used nor resting.
   */
  public synchronized void subClaimInDoubt(String pool, IpAddress ip) {
    if (subClaimsInDoubt.size() < MAX_TOMBSTONES) {
      subClaimsInDoubt.add(new AddressKey(pool, ip));
    }
  }

  /** This node's claim created the block {@code ref}. */
  public synchronized void blockClaimed(BlockRef ref) {
    blocks.claimed(ref);
  }

  /**
   * The block object {@code ref} is gone (deleted by this node or another writer, as a watch or
   * this node's own delete tells). Nothing that arrives late brings it back: a watch event from
   * before the delete, or the answer to this node's claim of it. A late event about an earlier
   * object of the same name changes nothing of the block this node holds now.
   */
  public synchronized void blockGone(BlockRef ref) {
    blocks.gone(ref);
    shared.gone(ref);
  }

  /**
   * A slot of {@code pool} (any node's, or no node's), from the pool's block watch: {@code shared}
   * when its {@code status.mode} is Shared or it has no {@code spec.node}; {@code deleting} when it
   * has a deletionTimestamp.
   */
  public synchronized void slotSeen(
      String pool, Cidr slot, String uid, boolean sharedSlot, boolean deleting) {
    blocks.take(pool, slot);
    shared.slotSeen(pool, new SharedSlots.Slot(slot, uid, sharedSlot, deleting));
  }

  /**
   * A sub-claim of {@code pool} (any node's) of the address {@code host}, under the slot named
   * {@code parent}, from the pool's block watch: its address is taken for every node, whatever this
   * node knows of the parent.
   */
  public synchronized void subClaimSeen(String pool, Cidr host, String uid, String parent) {
    blocks.take(pool, host);
    shared.subClaimSeen(new AddressKey(pool, host.network()), uid, parent);
  }

  /**
   * A fresh read found {@code slot} gone, being deleted or not Shared: nothing more is sub-claimed
   * in it until the pool's block watch shows it Shared again.
   */
  public synchronized void slotUnusable(String pool, Cidr slot) {
    shared.unusable(pool, slot);
  }

  /** A create of the sub-claim of {@code ip} answered 409: another node holds the address. */
  public synchronized void subClaimTaken(String pool, IpAddress ip) {
    shared.subClaimTaken(new AddressKey(pool, ip));
  }

  /**
   * Picks a free address of a slot of {@code pool} this node sees as Shared (and not being
   * deleted), at random, and reserves it: not sub-claimed by anyone, and free as {@link
   * #reserveFree} means it. The caller then sub-claims it.
   */
  public synchronized Optional<Pick> reserveShared(PoolView pool, Random random) {
    Instant now = clock.instant();
    List<Cidr> slots = new ArrayList<>();
    shared.usable(pool.name(), pool.layout().blockSize()).forEach(slot -> slots.add(slot.cidr()));
    return reserve(pool, PickStrategy.atRandom(pool.layout(), slots, free(pool, now), random));
  }

  /**
   * How many slots of {@code pool} nobody holds, counted up to {@code cap}: the rule that claims a
   * slot Shared from birth compares it with the pool's number of Nodes.
   */
  public synchronized int unclaimedCount(PoolView pool, int cap) {
    return SlotCandidates.unclaimedCount(pool.layout(), block -> taken(pool.name(), block), cap);
  }

  /**
   * A pool's reuse delay, from the pool watch: a host-prefix block goes back only once its address
   * has rested that long.
   */
  public synchronized void poolSeen(String pool, Duration reuseDelay) {
    resting.poolSeen(pool, reuseDelay);
  }

  public synchronized void poolGone(String pool) {
    resting.poolGone(pool);
  }

  /**
   * An IPAddress object exists (from a watch, a fresh read, or this node's own create). Objects
   * this node has deleted itself are not brought back by a late event.
   */
  public synchronized void leaseSeen(Lease lease) {
    ObjectRef ref = lease.object();
    if (tombstones.containsKey(ref)) {
      return;
    }
    firstSeen.putIfAbsent(ref, clock.instant());
    Map<ObjectRef, Lease> objects =
        holders.computeIfAbsent(lease.address(), k -> new LinkedHashMap<>());
    objects.put(ref, lease);
    if (objects.size() > 1) {
      log.error(
          "address {} of pool {} is held by {} IPAddress objects: {}; it stays taken until all"
              + " but one are gone",
          lease.ip(),
          lease.pool(),
          objects.size(),
          objects.keySet());
    }
    AttachmentKey key = new AttachmentKey(lease.pool(), lease.attachment());
    Lease current = byAttachment.get(key);
    if (current == null || current.object().equals(ref)) {
      byAttachment.put(key, lease);
    }
  }

  /**
   * An IPAddress object exists whose content this node cannot read, but whose name tells the
   * address: the address stays taken while it exists.
   */
  public synchronized void unreadableSeen(AddressKey address, ObjectRef ref) {
    unreadable.computeIfAbsent(address, k -> new HashSet<>()).add(ref);
  }

  /**
   * The IPAddress object {@code ref} is gone (deleted by kipam, or by the garbage collector with
   * its pod). Only that object's record changes; an address rests once its last holder is gone.
   */
  public synchronized void objectGone(AddressKey address, ObjectRef ref) {
    tombstones.remove(ref);
    foreign.gone(ref);
    firstSeen.remove(ref);
    Set<ObjectRef> bad = unreadable.get(address);
    if (bad != null && bad.remove(ref) && bad.isEmpty()) {
      unreadable.remove(address);
    }
    Map<ObjectRef, Lease> objects = holders.get(address);
    Lease gone = objects == null ? null : objects.remove(ref);
    if (gone == null) {
      return;
    }
    AttachmentKey key = new AttachmentKey(gone.pool(), gone.attachment());
    Lease current = byAttachment.get(key);
    if (current != null && current.object().equals(ref)) {
      byAttachment.remove(key);
    }
    if (objects.isEmpty()) {
      holders.remove(address);
      if (!uncertain.contains(address)) {
        rest(address);
      }
    } else if (!byAttachment.containsKey(key)) {
      objects.values().stream()
          .filter(l -> l.attachment().equals(gone.attachment()))
          .findFirst()
          .ifPresent(l -> byAttachment.put(key, l));
    }
  }

  public synchronized void markSynced() {
    synced = true;
  }

  public synchronized boolean synced() {
    return synced;
  }

  // ---- used by the allocator ----

  public synchronized Optional<Lease> leaseOf(String pool, Attachment attachment) {
    return Optional.ofNullable(byAttachment.get(new AttachmentKey(pool, attachment)));
  }

  /**
   * Whether this node has known {@code lease}'s object for at least {@code age}; after a restart,
   * ages count from the restart, which only makes garbage collection more careful.
   */
  public synchronized boolean olderThan(Lease lease, Duration age) {
    Instant seen = firstSeen.get(lease.object());
    return seen != null && !seen.plus(age).isAfter(clock.instant());
  }

  /** Every readable IPAddress object of this node (not the foreign ones it has met). */
  public synchronized List<Lease> leases() {
    List<Lease> all = new ArrayList<>();
    holders
        .values()
        .forEach(
            objects ->
                objects.forEach(
                    (ref, lease) -> {
                      if (!foreign.contains(ref)) {
                        all.add(lease);
                      }
                    }));
    return all;
  }

  /** A fresh read found another node's object holding an address: see {@link ForeignObjects}. */
  public synchronized void foreignSeen(Lease lease) {
    leaseSeen(lease);
    if (holders.getOrDefault(lease.address(), Map.of()).containsKey(lease.object())) {
      foreign.seen(lease, clock.instant());
    }
  }

  /** The foreign objects due for another read: {@link ForeignObjects#due}. */
  public synchronized List<Lease> foreignDue(Duration every) {
    return foreign.due(every, clock.instant());
  }

  /**
   * The address of {@code lease} is about to be released by this node: its release is recorded (for
   * the reuse delay, across a restart) before the write that frees it, so no restart between the
   * two can lose it.
   */
  public synchronized void releasing(Lease lease) {
    Instant now = clock.instant();
    resting.rest(lease.address(), now);
    releaseListener.released(lease.pool(), lease.ip(), now);
  }

  public synchronized List<Cidr> ownBlocks(String pool) {
    return blocks.cidrs(pool);
  }

  /**
   * This node's Exclusive slots of {@code pool} (its blocks at the pool's block size, no sub-claim,
   * none it converted to Shared: those are no longer its own to allocate in).
   */
  public synchronized int ownSlots(PoolView pool) {
    int n = 0;
    for (NodeBlocks.Own own : blocks.of(pool.name())) {
      boolean slot = own.ref().cidr().prefixLength() == pool.layout().blockSize();
      n += slot && !own.object.shared() ? 1 : 0;
    }
    return n;
  }

  public synchronized boolean taken(String pool, Cidr block) {
    return blocks.taken(pool, block);
  }

  /**
   * Picks a free address in this node's blocks of {@code pool} and reserves it: not held, not
   * reserved, not uncertain, not resting after a release; the least recently released first (never
   * released counts as longest ago). Blocks too large to scan are probed at random.
   */
  public synchronized Optional<Pick> reserveFree(PoolView pool, Random random) {
    resting.poolSeen(pool.name(), pool.reuseDelay());
    Instant now = clock.instant();
    PoolLayout layout = pool.layout();
    List<Cidr> open = new ArrayList<>();
    for (NodeBlocks.Own own : blocks.of(pool.name())) {
      Cidr block = own.ref().cidr();
      // A block of another geometry (an earlier pool of the same name, not yet collected) or one
      // being released is not allocated from.
      if (own.open()
          && block.prefixLength() == layout.blockSize()
          && layout.cidr().contains(block)) {
        open.add(block);
      }
    }
    return reserve(
        pool,
        PickStrategy.leastRecentlyReleased(
            layout,
            open,
            free(pool, now),
            ip -> resting.releasedAt(new AddressKey(pool.name(), ip)),
            random));
  }

  private Optional<Pick> reserve(PoolView pool, Optional<Pick> pick) {
    pick.ifPresent(p -> reserved.add(new AddressKey(pool.name(), p.ip())));
    return pick;
  }

  private Predicate<IpAddress> free(PoolView pool, Instant now) {
    return ip -> isFree(new AddressKey(pool.name(), ip), pool, now);
  }

  private boolean isFree(AddressKey key, PoolView pool, Instant now) {
    return !holders.containsKey(key)
        && !reserved.contains(key)
        && !uncertain.contains(key)
        && !unreadable.containsKey(key)
        && !shared.subClaimed(key)
        && !resting.resting(key, pool.reuseDelay(), now);
  }

  /** The allocation of a reserved address is written: it becomes a lease. */
  public synchronized void commit(Lease lease) {
    reserved.remove(lease.address());
    leaseSeen(lease);
  }

  /**
   * The allocation of a reserved address certainly did not happen: the address is free again. A
   * sub-claim this node holds of it (one a conversion made while the allocation was in flight) goes
   * back once the address is neither used nor resting.
   */
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

  /**
   * A fresh read settled an uncertain address: whatever object holds it has been recorded with
   * {@link #leaseSeen}; with none, the address rests like any released one.
   */
  public synchronized void settled(Uncertain u) {
    if (uncertain.settled(u) && !holders.containsKey(u.wanted().address())) {
      rest(u.wanted().address());
    }
  }

  /**
   * A lease this node deleted itself: the object is forgotten (and a late watch event about it
   * ignored), and the address rests once it has no other holder.
   */
  public synchronized void released(Lease lease) {
    ObjectRef ref = lease.object();
    objectGone(lease.address(), ref);
    tombstones.put(ref, clock.instant());
    Instant horizon = clock.instant().minus(TOMBSTONE_TTL);
    var oldest = tombstones.entrySet().iterator();
    while (oldest.hasNext()) {
      var entry = oldest.next();
      if (tombstones.size() <= MAX_TOMBSTONES && !entry.getValue().isBefore(horizon)) {
        break;
      }
      oldest.remove();
    }
  }

  /**
   * Takes the block {@code ref} out of use if nothing in it is held, reserved or uncertain, so it
   * can be deleted; false when something is (or the block is not this node's). {@link #blockGone}
   * or {@link #unretire} ends it.
   */
  public synchronized boolean retireIfEmpty(BlockRef ref) {
    return blocks.retireIfEmpty(ref, inUse());
  }

  /** The delete of the retired block {@code ref} certainly did not happen: it is open again. */
  public synchronized void unretire(BlockRef ref) {
    blocks.unretire(ref);
  }

  /**
   * Retires the host-prefix block of {@code pool} at {@code block} if its address has gone and
   * rested for the pool's reuse delay: in host-prefix mode the block is the allocation, and goes
   * back so that any node can claim it.
   */
  public synchronized Optional<BlockRef> retireIdleHostBlock(String pool, Cidr block) {
    NodeBlocks.Own own = blocks.get(pool, block);
    return synced
            && own != null
            && blocks.retireIfIdle(own, inUse(), resting.restingAt(clock.instant()))
        ? Optional.of(own.ref())
        : Optional.empty();
  }

  /**
   * The blocks this node should delete: those retiring (a delete that failed is tried again), after
   * retiring every host-prefix block whose address has gone and rested. None before the ledger has
   * synced: a block whose address has not reached it yet would look empty.
   */
  public synchronized List<BlockRef> blocksToDelete() {
    return synced ? blocks.toDelete(inUse(), resting.restingAt(clock.instant())) : List.of();
  }

  /**
   * Every pending release request of this node's blocks, decided: {@link
   * NodeBlocks#pendingReleases}.
   */
  public synchronized List<ReleaseDecision> pendingReleases() {
    return blocks.pendingReleases(this::inUse, this::restingAddresses);
  }

  /** This node's blocks Ready for {@code abandonAfter} or longer: {@link NodeBlocks#readySince}. */
  public synchronized List<BlockObject> abandonedReleases(Duration abandonAfter) {
    return blocks.readySince(clock.instant().minus(abandonAfter));
  }

  private Set<AddressKey> restingAddresses() {
    return resting.allRestingAt(clock.instant());
  }

  /** The answer to {@code decided}'s request was written: {@link NodeBlocks#answered}. */
  public synchronized void releaseAnswered(BlockObject decided, BlockObject written) {
    blocks.answered(decided, written, clock.instant());
  }

  /**
   * The conversions to carry out now ({@link SlotConversions#pending}); none before the ledger has
   * synced, as an address held in a slot may not have reached it yet.
   */
  public synchronized List<Conversion> pendingConversions() {
    return synced
        ? SlotConversions.pending(blocks, shared, this::inUse, this::restingAddresses)
        : List.of();
  }

  /** A conversion created the sub-claim {@code ref}: {@link SlotConversions#subClaimed}. */
  public synchronized void conversionSubClaimed(BlockRef ref) {
    SlotConversions.subClaimed(blocks, ref);
  }

  /** How many addresses each of this node's blocks has taken: see {@link BlockUsage}. */
  public synchronized List<BlockUsage> blockUsage() {
    return BlockUsage.of(blocks, inUse());
  }

  private Set<AddressKey> inUse() {
    Set<AddressKey> keys = new HashSet<>(holders.keySet());
    keys.addAll(reserved);
    keys.addAll(uncertain.addresses());
    keys.addAll(unreadable.keySet());
    return keys;
  }

  /** Candidate blocks of {@code pool} nobody holds, in random order; at most {@code limit}. */
  public synchronized List<Cidr> unclaimedBlocks(PoolView pool, Random random, int limit) {
    return SlotCandidates.unclaimed(
        pool.layout(), block -> taken(pool.name(), block), random, limit);
  }

  /** Sizes of the ledger's bounded records, for tests and benchmarks. */
  public synchronized Map<String, Integer> sizes() {
    return Map.of(
        "holders", holders.size(),
        "attachments", byAttachment.size(),
        "firstSeen", firstSeen.size(),
        "tombstones", tombstones.size(),
        "foreign", foreign.size(),
        "resting", resting.size(),
        "uncertain", uncertain.size(),
        "reserved", reserved.size());
  }

  private void rest(AddressKey address) {
    Instant now = clock.instant();
    NodeBlocks.Own own = blocks.containing(address);
    if (own != null && own.ref().hostPrefix()) {
      own.giveBack = true;
    }
    resting.rest(address, now);
    releaseListener.released(address.pool(), address.ip(), now);
  }

  /** An ADD returned {@code lease} to the runtime: see {@link UncertainWrites#adopted}. */
  public synchronized void adopted(Lease lease) {
    uncertain.adopted(lease);
  }

  /** A reserved address and the block it is in. */
  public record Pick(Cidr block, IpAddress ip) {}
}
