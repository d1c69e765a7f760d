package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
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
 * claims in flight; everything else is in the {@link Ledger} and the store.
 */
final class BlockClaims {

  private static final Logger log = LoggerFactory.getLogger(BlockClaims.class);

  /** How long an ADD waits for another ADD's block claim of the same pool. */
  private static final Duration CLAIM_WAIT = Duration.ofSeconds(30);

  private final Ledger ledger;
  private final AllocationStore store;
  private final Random random;
  private final Map<String, CompletableFuture<Void>> claims = new ConcurrentHashMap<>();

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
   * Whether a new slot of {@code pool} is claimed Exclusive: while the pool's unclaimed slots are
   * at least as many as the Nodes that may use it. With fewer, a node takes a free address of a
   * Shared slot first, and claims a new slot Shared from birth only when there is none; with the
   * number of Nodes unknown, always Exclusive.
   */
  boolean exclusive(PoolView pool) {
    if (pool.nodes() == null) {
      return true;
    }
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
    try {
      Claim claim = shared ? claimSharedSlot(pool) : claimNewBlock(pool, claimedHere);
      mine.complete(null);
      return claim;
    } catch (RuntimeException e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      claims.remove(pool.name(), mine);
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
        return Claim.CLAIMED;
      }
      ledger.blocks().blockTaken(pool.name(), block);
    }
    return Claim.NONE;
  }

  /**
   * Claims an unclaimed slot of {@code pool} Shared from birth: no node holds it, every node of the
   * pool sub-claims its addresses. Never given back by this node (it is not this node's).
   */
  private Claim claimSharedSlot(PoolView pool) {
    for (Cidr slot : ledger.blocks().unclaimedBlocks(pool, random, Allocator.ATTEMPTS)) {
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
