package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the {@link Allocator} gets and gives back slots: claims a new slot of a pool (Exclusive for
 * this node, or Shared from birth), one claim per pool in flight at a time on this node; sub-claims
 * a free address of a Shared slot; and deletes blocks the ledger has retired. Its only state is the
 * claims in flight and when each pool was last listed; everything else is in the {@link Ledger} and
 * the store.
 *
 * <p>A node watches no other node's blocks (design §6): what it knows of them comes from the 409s
 * of its own claims and from a paged LIST of the pool's blocks, made only when what it knows leaves
 * an ADD without an address ({@link #relist}), at most once per {@link #RELIST_AFTER} per pool. A
 * node whose own blocks have room never lists.
 */
final class BlockClaims {

  private static final Logger log = LoggerFactory.getLogger(BlockClaims.class);

  /** How long an ADD waits for another ADD's block claim of the same pool. */
  private static final Duration CLAIM_WAIT = Duration.ofSeconds(30);

  private final Ledger ledger;
  private final AllocationStore store;
  private final Random random;
  private final Map<String, CompletableFuture<Void>> claims = new ConcurrentHashMap<>();
  private final Map<String, Listed> listings = new ConcurrentHashMap<>();
  private final Map<String, Object> listingLocks = new ConcurrentHashMap<>();

  /**
   * How fresh a listing of a pool must be for an ADD to give up on it: older, it is listed again
   * first. Bounds the LISTs of a pool that is short to one per node every few seconds, and how long
   * a node may miss an address another node gave back.
   */
  static final Duration RELIST_AFTER = Duration.ofSeconds(3);

  /** When a pool was last listed (ledger time), and the number of that listing. */
  private record Listed(Instant at, long number) {}

  BlockClaims(Ledger ledger, AllocationStore store, Random random) {
    this.ledger = ledger;
    this.store = store;
    this.random = random;
  }

  /** What a claim of a new slot did. */
  enum Claim {
    /** This call claimed a slot. */
    CLAIMED,
    /** Another ADD of this node claimed one meanwhile; this one waited for it. */
    WAITED,
    /** No unclaimed slot is left (or this node may hold no more). */
    NONE
  }

  /**
   * The claim of a slot of {@code pool} in flight on this node, if any: what other ADDs wait for.
   */
  Optional<CompletableFuture<Void>> inFlight(String pool) {
    return Optional.ofNullable(claims.get(pool));
  }

  /** The number of the latest listing of {@code pool}: 0 before the first. */
  long listingOf(PoolView pool) {
    Listed listed = listings.get(pool.name());
    return listed == null ? 0 : listed.number();
  }

  /**
   * Lists every block of {@code pool} afresh, unless a listing newer than {@code knownListing}
   * exists (another ADD made one meanwhile) or the latest is younger than {@link #RELIST_AFTER}.
   * Returns whether the pool's record is now newer than {@code knownListing}: then an ADD that
   * found no address with the older record tries again.
   */
  boolean relist(PoolView pool, long knownListing) {
    synchronized (listingLocks.computeIfAbsent(pool.name(), k -> new Object())) {
      Listed latest = listings.get(pool.name());
      if (latest != null && latest.number() > knownListing) {
        return true;
      }
      if (latest != null && latest.at().plus(RELIST_AFTER).isAfter(ledger.now())) {
        return false;
      }
      Instant at = ledger.now();
      LedgerBlocks.Listing before = ledger.blocks().listingStarts(pool.name());
      List<AllocationStore.ListedBlock> listed = store.listBlocks(pool.name(), null);
      ledger.blocks().listed(before, listed);
      listings.put(pool.name(), new Listed(at, latest == null ? 1 : latest.number() + 1));
      log.info("listed the {} blocks of pool {}", listed.size(), pool.name());
      return true;
    }
  }

  /**
   * Whether a new slot of {@code pool} is claimed Exclusive: while the pool's unclaimed slots are
   * at least as many as the Nodes that may use it. With fewer, a node takes a free address of a
   * Shared slot first, and claims a new slot Shared from birth only when there is none; with the
   * number of Nodes unknown, always Exclusive.
   */
  boolean exclusive(PoolView pool) {
    if (pool.nodes() == null) {
      return true;
    }
    // The rule counts unclaimed slots, which only a listing tells.
    relist(pool, listingOf(pool));
    int nodes = Math.max(pool.nodes(), 1);
    return ledger.blocks().unclaimedCount(pool, nodes) >= nodes;
  }

  /**
   * Claims one more slot of {@code pool}, for this node or ({@code shared}) Shared from birth,
   * unless another ADD is claiming one right now (then waits for that).
   */
  Claim claim(PoolView pool, List<BlockRef> claimedHere, boolean shared) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = claims.putIfAbsent(pool.name(), mine);
    if (running != null) {
      awaitClaim(pool, running);
      return Claim.WAITED;
    }
    RuntimeException failure = null;
    try {
      return shared ? claimSharedSlot(pool) : claimNewBlock(pool, claimedHere);
    } catch (RuntimeException e) {
      failure = e;
      throw e;
    } finally {
      // Out of the record before anyone is told it is done: an ADD that meets a finished claim
      // there takes it for one in flight, returns WAITED at once, and goes round without a claim
      // of its own until its rounds run out.
      claims.remove(pool.name(), mine);
      if (failure == null) {
        mine.complete(null);
      } else {
        mine.completeExceptionally(failure);
      }
    }
  }

  private void awaitClaim(PoolView pool, CompletableFuture<Void> running) {
    try {
      running.get(CLAIM_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while waiting for a block claim", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new StoreUnavailableException("a block claim of " + pool.name() + " failed", e);
    } catch (TimeoutException e) {
      throw new StoreUnavailableException("a block claim of " + pool.name() + " takes too long", e);
    }
  }

  private Claim claimNewBlock(PoolView pool, List<BlockRef> claimedHere) {
    int held = ledger.blocks().ownSlots(pool);
    if (pool.maxBlocksPerNode() > 0 && held >= pool.maxBlocksPerNode()) {
      throw new AllocationException(
          AllocationException.Reason.BLOCK_LIMIT,
          "pool "
              + pool.name()
              + " has no free address in the "
              + held
              + " blocks node "
              + ledger.node()
              + " holds, and spec.maxBlocksPerNode ("
              + pool.maxBlocksPerNode()
              + ") allows no more");
    }
    for (Cidr block : ledger.blocks().unclaimedBlocks(pool, random, Allocator.ATTEMPTS)) {
      // A claim with an unknown outcome changes nothing here: if it happened, the node's block
      // watch brings the block as this node's; if not, the block is still free. Marking it taken
      // would lose it for good when the claim did not happen.
      String uid = store.claimBlock(pool.name(), block, ledger.node());
      if (uid != null) {
        BlockRef claimed = new BlockRef(pool.name(), block, uid);
        ledger.blocks().blockClaimed(claimed);
        claimedHere.add(claimed);
        log.info("claimed block {} of pool {} for node {}", block, pool.name(), ledger.node());
        if (!claimed.hostPrefix()) {
          // A sub-claim under a slot its holder sees Exclusive is a fault, but a taken address all
          // the same: the holder must know of it before it hands out anything of the slot.
          ledger.blocks().subClaimsListed(pool.name(), store.listBlocks(pool.name(), block));
          leftoversFound(pool, block, store.listAddresses(pool.name(), block));
        }
        return Claim.CLAIMED;
      }
      ledger.blocks().blockTaken(pool.name(), block);
    }
    return Claim.NONE;
  }

  /**
   * IPAddresses of a slot this node has just claimed that it did not write: the slot's former block
   * was deleted by hand (its finalizer bypassed) while they existed. Each stays taken until it is
   * gone, read again now and then ({@link Settling#recheckForeign}).
   */
  private void leftoversFound(PoolView pool, Cidr block, AllocationStore.ListedAddresses listed) {
    // This node's own IPAddresses in the list are the ones its other calls wrote into the block
    // since the claim (the block is open to them from the moment it is claimed). The node's
    // address watch knows each of them; taken from this read, which may be older than a DEL that
    // followed, one would come back as a lease after its release and stay taken for good.
    AllocationStore.ListedAddresses left =
        new AllocationStore.ListedAddresses(
            listed.readable().stream().filter(l -> !ledger.node().equals(l.node())).toList(),
            listed.unreadable());
    if (left.isEmpty()) {
      return;
    }
    log.warn(
        "block {} of pool {}, claimed by node {}, already holds {} IPAddresses (its former block"
            + " was deleted by hand); they stay taken until they are gone",
        block,
        pool.name(),
        ledger.node(),
        left.readable().size() + left.unreadable().size());
    left.readable().forEach(ledger::found);
    left.unreadable().forEach((ref, address) -> ledger.unreadableSeen(address, ref));
  }

  /**
   * Claims an unclaimed slot of {@code pool} Shared from birth: no node holds it, every node of the
   * pool sub-claims its addresses. Never given back by this node (it is not this node's).
   */
  private Claim claimSharedSlot(PoolView pool) {
    for (Cidr slot : ledger.blocks().unclaimedBlocks(pool, random, Allocator.ATTEMPTS)) {
      AllocationStore.ListedAddresses left = store.listAddresses(pool.name(), slot);
      if (!left.isEmpty()) {
        // Every node sub-claims the addresses of a Shared slot, and none of them would know of
        // these: the slot waits until they are gone (kipam-operator removes them as orphans).
        log.warn(
            "slot {} of pool {} has no IPBlock but {} IPAddresses (its block was deleted by hand);"
                + " not claimed Shared while they exist",
            slot,
            pool.name(),
            left.readable().size() + left.unreadable().size());
        continue;
      }
      String uid = store.claimSharedSlot(pool.name(), slot);
      if (uid != null) {
        ledger.blocks().slotSeen(pool.name(), slot, uid, true, false);
        log.info(
            "claimed slot {} of pool {} Shared from birth (fewer unclaimed slots than the {} Nodes"
                + " of the pool)",
            slot,
            pool.name(),
            pool.nodes());
        return Claim.CLAIMED;
      }
      ledger.blocks().blockTaken(pool.name(), slot);
    }
    return Claim.NONE;
  }

  /**
   * Sub-claims a free address of a slot this node sees as Shared, moving on when another node won
   * it (409). After the claim the slot is read afresh: when it is gone, being deleted, or not
   * Shared, the sub-claim goes back at once (the other half of the two-sided check that lets a
   * Shared slot leave the pool). Returns the address, reserved, with its sub-claim as block.
   */
  Optional<Ledger.Pick> subClaim(PoolView pool, List<BlockRef> claimedHere) {
    for (int i = 0; i < Allocator.ATTEMPTS; i++) {
      Optional<Ledger.Pick> pick = ledger.reserveShared(pool, random);
      if (pick.isEmpty()) {
        return Optional.empty();
      }
      Cidr slot = pick.get().block();
      IpAddress ip = pick.get().ip();
      AddressKey address = new AddressKey(pool.name(), ip);
      String uid;
      try {
        uid = store.claimSubClaim(pool.name(), ip, ledger.node(), slot);
      } catch (WriteOutcomeUnknownException e) {
        // If it happened, the node's block watch brings the sub-claim, which then goes back.
        ledger.unreserve(address);
        ledger.blocks().subClaimInDoubt(pool.name(), ip);
        throw e;
      } catch (RuntimeException e) {
        ledger.unreserve(address);
        throw e;
      }
      if (uid == null) {
        ledger.unreserve(address);
        ledger.blocks().subClaimTaken(pool.name(), ip);
        log.info("address {} of Shared slot {} is sub-claimed by another node", ip, slot);
        continue;
      }
      BlockRef ref = new BlockRef(pool.name(), Cidr.of(ip, ip.family().bits()), uid);
      ledger.blocks().blockClaimed(ref);
      claimedHere.add(ref);
      Optional<AllocationStore.SlotState> parent;
      try {
        parent = store.readSlot(pool.name(), slot);
      } catch (RuntimeException e) {
        ledger.unreserve(address); // the failed ADD gives the sub-claim back
        throw e;
      }
      if (parent.isEmpty() || parent.get().deleting() || !parent.get().shared()) {
        ledger.unreserve(address);
        claimedHere.remove(ref);
        ledger.blocks().slotUnusable(pool.name(), slot);
        if (ledger.blocks().retireIfEmpty(ref)) {
          deleteBlock(ref, "its slot " + slot + " is gone, being deleted or not Shared");
        }
        continue;
      }
      log.info(
          "sub-claimed {} of Shared slot {} of pool {} for node {}",
          ip,
          slot,
          pool.name(),
          ledger.node());
      return Optional.of(new Ledger.Pick(ref.cidr(), ip));
    }
    return Optional.empty();
  }

  /**
   * The state of the slot {@code slot} of a chosen address, read afresh: a slot nobody holds is
   * claimed Shared from birth first, so the address can be sub-claimed in it.
   */
  Optional<AllocationStore.SlotState> slotOfChosen(PoolView pool, Cidr slot) {
    Optional<AllocationStore.SlotState> state = store.readSlot(pool.name(), slot);
    if (state.isEmpty()) {
      String uid = store.claimSharedSlot(pool.name(), slot);
      if (uid != null) {
        ledger.blocks().slotSeen(pool.name(), slot, uid, true, false);
        log.info(
            "claimed slot {} of pool {} Shared from birth for a chosen address", slot, pool.name());
      }
      state = store.readSlot(pool.name(), slot);
    }
    return state;
  }

  void giveBackIfEmpty(BlockRef claimed, RuntimeException failure) {
    if (!ledger.blocks().retireIfEmpty(claimed)) {
      return;
    }
    try {
      deleteBlock(claimed, "the ADD that claimed it failed");
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  /**
   * Deletes the retired block {@code ref} (UID precondition). A delete that may have happened
   * leaves the block retired, never open: if it is gone, another node may claim it any moment, so
   * nothing must be allocated from it; {@link Allocator#returnBlocks} tries again, and the block
   * watch tells when it is gone. Only a delete the API server refused opens it again.
   */
  void deleteBlock(BlockRef ref, String why) {
    try {
      store.releaseBlock(ref.pool(), ref.cidr(), ref.uid());
    } catch (StoreUnavailableException e) {
      throw e;
    } catch (RuntimeException e) {
      ledger.blocks().unretire(ref);
      throw e;
    }
    ledger.blocks().blockGone(ref);
    log.info("gave back block {} of pool {}: {}", ref.cidr(), ref.pool(), why);
  }
}
