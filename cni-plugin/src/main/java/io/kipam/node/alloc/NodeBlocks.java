package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The blocks a {@link Ledger} knows: which blocks of each pool anyone holds (so claims skip them),
 * and for each block of this node the object it is and whether it is open for allocation. A block
 * of this node is closed while kipam-operator releases it ({@code Requested} or {@code Ready}, as
 * the node's block watch last showed it) and while this node retires it in order to delete it. Not
 * thread-safe; the ledger calls it under its monitor.
 */
final class NodeBlocks {

  /** One block of this node. */
  static final class Own {
    /** The latest the node's block watch showed of it, or what this node's claim created. */
    BlockObject object;

    /** Being deleted by this node: nothing is allocated from it, whatever its status says. */
    boolean retiring;

    /** A host-prefix block whose address went: it goes back once the address has rested. */
    boolean giveBack;

    /**
     * Claimed by an ADD that is not done yet: until that ADD has reserved its address in it, its
     * count says 0 for a moment that means nothing, so a count of 0 is not reported meanwhile.
     */
    boolean claimInFlight;

    /** The round whose Ready answer the block carries, and since when (this node's clock). */
    private String readyRound;

    private Instant readySince;

    Own(BlockObject object) {
      this.object = object;
    }

    /** Records {@code shown} as the block's state, noting when a Ready answer was first seen. */
    void show(BlockObject shown, Instant now) {
      object = shown;
      if (shown.release() != ReleaseState.Ready) {
        readyRound = null;
        readySince = null;
      } else if (readySince == null || !Objects.equals(readyRound, shown.requestedAt())) {
        readyRound = shown.requestedAt();
        readySince = now;
      }
    }

    /**
     * The block has carried a Ready answer since {@code cutoff} or longer without being deleted:
     * the operator has not come back to the round.
     */
    boolean readySince(Instant cutoff) {
      return readySince != null && !object.deleting() && !readySince.isAfter(cutoff);
    }

    BlockRef ref() {
      return object.ref();
    }

    boolean open() {
      return !retiring && !object.closed();
    }
  }

  /**
   * UIDs of blocks known to be gone, so that nothing that arrives late brings one back: a watch
   * event from before the delete, or the answer to this node's own claim, processed after the watch
   * has shown the new block requested, answered Ready and deleted. A UID never comes back, so only
   * the number kept is bounded.
   */
  static final int MAX_GONE = 4096;

  private final Map<String, Set<Cidr>> taken = new HashMap<>();
  private final Map<String, TreeMap<Cidr, Own>> own = new HashMap<>();
  private final Set<String> goneUids = new LinkedHashSet<>();

  /** Someone holds {@code block} (this node or another, or a claim's outcome is unknown). */
  void take(String pool, Cidr block) {
    taken.computeIfAbsent(pool, p -> new HashSet<>()).add(block);
  }

  boolean taken(String pool, Cidr block) {
    return taken.getOrDefault(pool, Set.of()).contains(block) || get(pool, block) != null;
  }

  /** The blocks of {@code pool} recorded as taken (a copy). */
  Set<Cidr> takenOf(String pool) {
    return new HashSet<>(taken.getOrDefault(pool, Set.of()));
  }

  /**
   * A fresh listing of the pool no longer shows {@code block}: another node gave it back, so claims
   * may try it again. This node's own blocks are told gone by its own block watch alone.
   */
  void untake(String pool, Cidr block) {
    Set<Cidr> held = taken.get(pool);
    if (held != null && get(pool, block) == null) {
      held.remove(block);
    }
  }

  /**
   * This node's claim created {@code ref}; a record the watch made of it already stays. Returns
   * null when the block is gone already.
   */
  Own claimed(BlockRef ref) {
    if (goneUids.contains(ref.uid())) {
      return null;
    }
    take(ref.pool(), ref.cidr());
    Own existing = get(ref.pool(), ref.cidr());
    if (existing != null && existing.ref().uid().equals(ref.uid())) {
      return existing;
    }
    Own fresh = new Own(new BlockObject(ref, null, false, null, null, null));
    own.computeIfAbsent(ref.pool(), p -> new TreeMap<>()).put(ref.cidr(), fresh);
    return fresh;
  }

  /**
   * The node's block watch shows {@code object}, one of this node's blocks; returns its record, or
   * null for a block known to be gone. Its release state takes effect at once: from this moment
   * nothing is allocated from a block kipam-operator is releasing ({@code Requested} or {@code
   * Ready}), until its status says otherwise.
   */
  Own seen(BlockObject object, Instant now) {
    BlockRef ref = object.ref();
    if (goneUids.contains(ref.uid())) {
      return null;
    }
    take(ref.pool(), ref.cidr());
    Own existing = get(ref.pool(), ref.cidr());
    if (existing != null && existing.ref().uid().equals(ref.uid())) {
      existing.show(object, now);
      return existing;
    }
    Own fresh = new Own(object);
    fresh.show(object, now);
    own.computeIfAbsent(ref.pool(), p -> new TreeMap<>()).put(ref.cidr(), fresh);
    return fresh;
  }

  /**
   * The object {@code ref} is gone (deleted by this node or another writer, as a watch or this
   * node's own delete tells). Nothing that arrives late brings it back: a watch event from before
   * the delete, or the answer to this node's claim of it. A late event about an earlier object of
   * the same name (its UID differs) changes nothing of the block this node holds now.
   */
  void gone(BlockRef ref) {
    goneUids.add(ref.uid());
    if (goneUids.size() > MAX_GONE) {
      var oldest = goneUids.iterator();
      oldest.next();
      oldest.remove();
    }
    Own current = get(ref.pool(), ref.cidr());
    if (current != null) {
      if (!current.ref().uid().equals(ref.uid())) {
        return;
      }
      own.get(ref.pool()).remove(ref.cidr());
    }
    Set<Cidr> held = taken.get(ref.pool());
    if (held != null) {
      held.remove(ref.cidr());
    }
  }

  /** The block {@code ref}, if it is this node's (and that object, by UID). */
  Own get(BlockRef ref) {
    Own own = get(ref.pool(), ref.cidr());
    return own != null && own.ref().uid().equals(ref.uid()) ? own : null;
  }

  Own get(String pool, Cidr block) {
    TreeMap<Cidr, Own> blocks = own.get(pool);
    return blocks == null ? null : blocks.get(block);
  }

  /** This node's blocks of {@code pool}, in address order. */
  Iterable<Own> of(String pool) {
    TreeMap<Cidr, Own> blocks = own.get(pool);
    return blocks == null ? List.of() : blocks.values();
  }

  List<Cidr> cidrs(String pool) {
    TreeMap<Cidr, Own> blocks = own.get(pool);
    return blocks == null ? List.of() : List.copyOf(blocks.keySet());
  }

  /** Every block of this node. */
  List<Own> all() {
    List<Own> all = new ArrayList<>();
    own.values().forEach(blocks -> all.addAll(blocks.values()));
    return all;
  }

  /**
   * This node's block of {@code pool} that contains {@code ip}, if any: its sub-claim of the
   * address rather than the slot it lies in, when this node holds both (a slot it converted to
   * Shared).
   */
  Own containing(AddressKey address) {
    TreeMap<Cidr, Own> blocks = own.get(address.pool());
    if (blocks == null) {
      return null;
    }
    // Blocks sort by network, then prefix: a slot comes before the sub-claims inside it, so the
    // walk down from the address passes only this node's sub-claims of lower addresses first.
    var candidate = blocks.floorEntry(Cidr.of(address.ip(), address.ip().family().bits()));
    while (candidate != null) {
      Cidr block = candidate.getKey();
      if (block.contains(address.ip())) {
        return candidate.getValue();
      }
      if (block.prefixLength() != block.family().bits()) {
        return null;
      }
      candidate = blocks.lowerEntry(block);
    }
    return null;
  }

  /**
   * Marks this node's host-prefix block of {@code address}, if any, to go back once idle: the
   * allocation of the address did not happen, and a sub-claim this node holds of it (one a
   * conversion made while the allocation was in flight) goes back once the address is neither used
   * nor resting.
   */
  void giveBackHost(AddressKey address) {
    Own own = get(address.pool(), Cidr.of(address.ip(), address.ip().family().bits()));
    if (own != null) {
      own.giveBack = true;
    }
  }

  /**
   * This node's blocks of {@code pool} open for allocation, in address order: not closed, and of
   * the pool's geometry. A block of another geometry (an earlier pool of the same name, not yet
   * collected) or one being released is not allocated from.
   */
  List<Cidr> openBlocks(String pool, PoolLayout layout) {
    List<Cidr> open = new ArrayList<>();
    for (Own own : of(pool)) {
      Cidr block = own.ref().cidr();
      if (own.open()
          && block.prefixLength() == layout.blockSize()
          && layout.cidr().contains(block)) {
        open.add(block);
      }
    }
    return open;
  }

  /**
   * This node's Exclusive slots of {@code pool}: its blocks at the pool's {@code blockSize}, no
   * sub-claim, none it converted to Shared (those are no longer its own to allocate in).
   */
  int exclusiveSlots(String pool, int blockSize) {
    int n = 0;
    for (Own own : of(pool)) {
      boolean slot = own.ref().cidr().prefixLength() == blockSize;
      n += slot && !own.object.shared() ? 1 : 0;
    }
    return n;
  }

  /** This node's slots whose conversion to Shared kipam-operator has asked for. */
  List<Own> converting() {
    List<Own> converting = new ArrayList<>();
    for (Own own : all()) {
      if (own.object.converting() && !own.retiring) {
        converting.add(own);
      }
    }
    return converting;
  }

  // ---- decisions, on the sets of addresses the ledger passes ----

  /**
   * Takes the block {@code ref} out of use, so it can be deleted, unless an address of {@code used}
   * (held, reserved or uncertain) is in it; false then, or when the block is not this node's.
   * {@link #gone} or {@link #unretire} ends it.
   */
  boolean retireIfEmpty(BlockRef ref, Set<AddressKey> used) {
    Own own = get(ref);
    if (own == null || count(ref, used) > 0) {
      return false;
    }
    own.retiring = true;
    return true;
  }

  /** The delete of the retired block {@code ref} certainly did not happen: it is open again. */
  void unretire(BlockRef ref) {
    Own own = get(ref);
    if (own != null) {
      own.retiring = false;
    }
  }

  /**
   * Retires {@code own} if it is a host-prefix block marked to go back whose address is neither
   * {@code used} nor {@code resting} (it has rested for the pool's reuse delay): in host-prefix
   * mode the block is the allocation, and goes back so that any node can claim it.
   */
  boolean retireIfIdle(Own own, Set<AddressKey> used, Predicate<AddressKey> resting) {
    if (!own.giveBack || own.retiring || !own.ref().hostPrefix()) {
      return false;
    }
    AddressKey address = new AddressKey(own.ref().pool(), own.ref().cidr().network());
    if (used.contains(address)) {
      own.giveBack = false; // held again: its next release marks it again
      return false;
    }
    if (resting.test(address)) {
      return false;
    }
    own.giveBack = false;
    own.retiring = true;
    return true;
  }

  /**
   * The blocks this node should delete: those retiring (a delete that failed is tried again), after
   * retiring every host-prefix block whose address has gone and rested.
   */
  List<BlockRef> toDelete(Set<AddressKey> used, Predicate<AddressKey> resting) {
    List<BlockRef> due = new ArrayList<>();
    for (Own own : all()) {
      if (own.retiring || retireIfIdle(own, used, resting)) {
        due.add(own.ref());
      }
    }
    return due;
  }

  /**
   * Every pending release request ({@code Requested}, as the block watch last showed it) of this
   * node's blocks, decided: each with how many addresses of {@code used} (held, reserved, uncertain
   * or unreadable) it has and how many of {@code resting}, so {@link ReleaseDecision#ready} when
   * neither. Such a block is closed since its request was seen and stays closed until its status
   * says otherwise, so no allocation slips in between this decision and the answer's write, which
   * carries the resourceVersion decided on. The address sets are only asked for when some release
   * is pending.
   */
  List<ReleaseDecision> pendingReleases(
      Supplier<Set<AddressKey>> used, Supplier<Set<AddressKey>> resting) {
    List<ReleaseDecision> pending = new ArrayList<>();
    Set<AddressKey> inUse = null;
    Set<AddressKey> rest = null;
    for (Own own : all()) {
      if (own.object.release() == ReleaseState.Requested) {
        inUse = inUse == null ? used.get() : inUse;
        rest = rest == null ? resting.get() : rest;
        pending.add(
            new ReleaseDecision(own.object, count(own.ref(), inUse), count(own.ref(), rest)));
      }
    }
    return pending;
  }

  /**
   * This node's blocks that have carried a Ready answer since {@code cutoff} or earlier (this
   * node's clock) without being deleted: the operator has not come back to the round.
   */
  List<BlockObject> readySince(Instant cutoff) {
    List<BlockObject> stale = new ArrayList<>();
    for (Own own : all()) {
      if (own.readySince(cutoff)) {
        stale.add(own.object);
      }
    }
    return stale;
  }

  /**
   * The answer to {@code decided}'s request was written as {@code written}: recorded (at {@code
   * now}) unless the block watch has shown a newer state than the one decided on already.
   */
  void answered(BlockObject decided, BlockObject written, Instant now) {
    Own own = get(decided.ref());
    if (own != null && own.object.equals(decided)) {
      own.show(written, now);
    }
  }

  private static int count(BlockRef ref, Set<AddressKey> addresses) {
    int n = 0;
    for (AddressKey key : addresses) {
      if (key.pool().equals(ref.pool()) && ref.cidr().contains(key.ip())) {
        n++;
      }
    }
    return n;
  }
}
