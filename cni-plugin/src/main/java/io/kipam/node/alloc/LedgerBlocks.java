package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * The blocks side of a node's {@link Ledger}: the blocks it holds and the blocks anyone holds, the
 * Shared slots and their sub-claims, and the decisions that follow from them (which blocks go back,
 * how to answer a release request, which conversions to carry out). Every method holds the ledger's
 * monitor, the one its address book is guarded by, so a block retired and an address picked in it
 * never interleave; the ledger hands it the addresses in use and resting.
 */
public final class LedgerBlocks {

  private final Ledger ledger;
  private final NodeBlocks blocks;
  private final SharedSlots shared;
  private final Set<AddressKey> subClaimsInDoubt = new HashSet<>();

  LedgerBlocks(Ledger ledger, NodeBlocks blocks, SharedSlots shared) {
    this.ledger = ledger;
    this.blocks = blocks;
    this.shared = shared;
  }

  // ---- fed by the watches ----

  /** Someone holds {@code block} of {@code pool} (another node, or this one): claims skip it. */
  public void blockTaken(String pool, Cidr block) {
    synchronized (ledger) {
      blocks.take(pool, block);
    }
  }

  /**
   * The node's block watch shows one of this node's blocks ({@link NodeBlocks#seen}). A host-prefix
   * block seen before the ledger has synced, or whose sub-claim was in doubt, goes back once idle
   * (its address may have gone while no daemon ran).
   */
  public void ownBlockSeen(BlockObject object) {
    synchronized (ledger) {
      NodeBlocks.Own own = blocks.seen(object, ledger.now());
      if (own != null
          && object.ref().hostPrefix()
          && (!ledger.synced()
              || subClaimsInDoubt.remove(
                  new AddressKey(object.ref().pool(), object.ref().cidr().network())))) {
        own.giveBack = true;
      }
    }
  }

  /** A failed ADD's sub-claim of {@code ip} may exist: if the watch brings it, it goes back. */
  public void subClaimInDoubt(String pool, IpAddress ip) {
    synchronized (ledger) {
      if (subClaimsInDoubt.size() < AddressObjects.MAX_TOMBSTONES) {
        subClaimsInDoubt.add(new AddressKey(pool, ip));
      }
    }
  }

  /** This node's claim created the block {@code ref}. */
  public void blockClaimed(BlockRef ref) {
    synchronized (ledger) {
      NodeBlocks.Own claimed = blocks.claimed(ref);
      if (claimed != null) {
        claimed.claimInFlight = true;
      }
    }
  }

  /**
   * The ADD that claimed {@code refs} is done (its address created, or the claims given back):
   * their counts are reported from now on (see {@link BlockUsage}).
   */
  public void claimsSettled(List<BlockRef> refs) {
    synchronized (ledger) {
      for (BlockRef ref : refs) {
        NodeBlocks.Own own = blocks.get(ref);
        if (own != null) {
          own.claimInFlight = false;
        }
      }
    }
  }

  /** The block object {@code ref} is gone: {@link NodeBlocks#gone} and {@link SharedSlots#gone}. */
  public void blockGone(BlockRef ref) {
    synchronized (ledger) {
      blocks.gone(ref);
      shared.gone(ref);
    }
  }

  /** A slot of {@code pool} any node holds (or none): {@link SharedSlots#slotSeen}. */
  public void slotSeen(String pool, Cidr slot, String uid, boolean sharedSlot, boolean deleting) {
    synchronized (ledger) {
      blocks.take(pool, slot);
      shared.slotSeen(pool, new SharedSlots.Slot(slot, uid, sharedSlot, deleting));
    }
  }

  /** A sub-claim of {@code host}, any node's: {@link SharedSlots#subClaimSeen}. */
  public void subClaimSeen(String pool, Cidr host, String uid, String parent) {
    synchronized (ledger) {
      blocks.take(pool, host);
      shared.subClaimSeen(new AddressKey(pool, host.network()), uid, parent);
    }
  }

  /**
   * What this node knew of the other blocks of {@code pool} as a listing of it began: a listing
   * forgets only what was known before it started, never what a claim taught meanwhile.
   */
  public Listing listingStarts(String pool) {
    synchronized (ledger) {
      return new Listing(
          pool, blocks.takenOf(pool), shared.slotsOf(pool), shared.subClaimsOf(pool));
    }
  }

  /** The other blocks of a pool known when a listing began: see {@link #listingStarts}. */
  public record Listing(String pool, Set<Cidr> taken, Set<Cidr> slots, Set<AddressKey> subClaims) {}

  /**
   * A fresh listing of every block of the pool: each listed block is taken (and each slot and
   * sub-claim recorded as the pool's block watch once recorded it); what was known when the listing
   * began and the listing no longer shows is gone, so claims may try it again.
   */
  public void listed(Listing before, List<AllocationStore.ListedBlock> listed) {
    synchronized (ledger) {
      Set<Cidr> seen = new HashSet<>();
      for (AllocationStore.ListedBlock block : listed) {
        seen.add(block.cidr());
        record(before.pool(), block);
      }
      for (Cidr block : before.taken()) {
        if (!seen.contains(block)) {
          blocks.untake(before.pool(), block);
        }
      }
      for (Cidr slot : before.slots()) {
        if (!seen.contains(slot)) {
          shared.forgetSlot(before.pool(), slot);
        }
      }
      for (AddressKey address : before.subClaims()) {
        if (!seen.contains(Cidr.of(address.ip(), address.ip().family().bits()))) {
          shared.forgetSubClaim(address);
        }
      }
    }
  }

  /**
   * Sub-claims listed under a slot this node has just claimed Exclusive: each is a taken address
   * the node never hands out from memory (hole 1 of the shared-slots design).
   */
  public void subClaimsListed(String pool, List<AllocationStore.ListedBlock> listed) {
    synchronized (ledger) {
      listed.forEach(block -> record(pool, block));
    }
  }

  private void record(String pool, AllocationStore.ListedBlock block) {
    blocks.take(pool, block.cidr());
    if (block.parent() != null) {
      shared.subClaimSeen(
          new AddressKey(pool, block.cidr().network()), block.uid(), block.parent());
    } else {
      shared.slotSeen(
          pool, new SharedSlots.Slot(block.cidr(), block.uid(), block.shared(), block.deleting()));
    }
  }

  /** A fresh read found {@code slot} not usable: {@link SharedSlots#unusable}. */
  public void slotUnusable(String pool, Cidr slot) {
    synchronized (ledger) {
      shared.unusable(pool, slot);
    }
  }

  /** A create of the sub-claim of {@code ip} answered 409: another node holds the address. */
  public void subClaimTaken(String pool, IpAddress ip) {
    synchronized (ledger) {
      shared.subClaimTaken(new AddressKey(pool, ip));
    }
  }

  // ---- read by the allocator and the block claims ----

  public List<Cidr> ownBlocks(String pool) {
    synchronized (ledger) {
      return blocks.cidrs(pool);
    }
  }

  /** This node's Exclusive slots of {@code pool}: {@link NodeBlocks#exclusiveSlots}. */
  public int ownSlots(PoolView pool) {
    synchronized (ledger) {
      return blocks.exclusiveSlots(pool.name(), pool.layout().blockSize());
    }
  }

  public boolean taken(String pool, Cidr block) {
    synchronized (ledger) {
      return blocks.taken(pool, block);
    }
  }

  /** Candidate blocks of {@code pool} nobody holds, in random order; at most {@code limit}. */
  public List<Cidr> unclaimedBlocks(PoolView pool, Random random, int limit) {
    synchronized (ledger) {
      return SlotCandidates.unclaimed(
          pool.layout(), block -> blocks.taken(pool.name(), block), random, limit);
    }
  }

  /** How many slots of {@code pool} nobody holds, up to {@code cap}: {@link SlotCandidates}. */
  public int unclaimedCount(PoolView pool, int cap) {
    synchronized (ledger) {
      return SlotCandidates.unclaimedCount(
          pool.layout(), block -> blocks.taken(pool.name(), block), cap);
    }
  }

  // ---- blocks going back, release requests and conversions ----

  /** Takes {@code ref} out of use if nothing in it is taken: {@link NodeBlocks#retireIfEmpty}. */
  public boolean retireIfEmpty(BlockRef ref) {
    synchronized (ledger) {
      return blocks.retireIfEmpty(ref, ledger.inUse());
    }
  }

  /** The delete of the retired block {@code ref} certainly did not happen: it is open again. */
  public void unretire(BlockRef ref) {
    synchronized (ledger) {
      blocks.unretire(ref);
    }
  }

  /** Retires the host-prefix block at {@code block} if idle: {@link NodeBlocks#retireIfIdle}. */
  public Optional<BlockRef> retireIdleHostBlock(String pool, Cidr block) {
    synchronized (ledger) {
      NodeBlocks.Own own = blocks.get(pool, block);
      return ledger.synced()
              && own != null
              && blocks.retireIfIdle(own, ledger.inUse(), ledger.restingNow())
          ? Optional.of(own.ref())
          : Optional.empty();
    }
  }

  /** The blocks this node should delete ({@link NodeBlocks#toDelete}); none before synced. */
  public List<BlockRef> blocksToDelete() {
    synchronized (ledger) {
      return ledger.synced() ? blocks.toDelete(ledger.inUse(), ledger.restingNow()) : List.of();
    }
  }

  /** Every pending release request, decided: {@link NodeBlocks#pendingReleases}. */
  public List<ReleaseDecision> pendingReleases() {
    synchronized (ledger) {
      return blocks.pendingReleases(ledger::inUse, ledger::restingAddresses);
    }
  }

  /** This node's blocks Ready for {@code abandonAfter} or longer: {@link NodeBlocks#readySince}. */
  public List<BlockObject> abandonedReleases(Duration abandonAfter) {
    synchronized (ledger) {
      return blocks.readySince(ledger.now().minus(abandonAfter));
    }
  }

  /** The answer to {@code decided}'s request was written: {@link NodeBlocks#answered}. */
  public void releaseAnswered(BlockObject decided, BlockObject written) {
    synchronized (ledger) {
      blocks.answered(decided, written, ledger.now());
    }
  }

  /** The conversions to carry out now ({@link SlotConversions#pending}); none before synced. */
  public List<Conversion> pendingConversions() {
    synchronized (ledger) {
      return ledger.synced()
          ? SlotConversions.pending(blocks, ledger::inUse, ledger::restingAddresses)
          : List.of();
    }
  }

  /** A conversion created the sub-claim {@code ref}: {@link SlotConversions#subClaimed}. */
  public void conversionSubClaimed(BlockRef ref) {
    synchronized (ledger) {
      SlotConversions.subClaimed(blocks, ref);
    }
  }

  /** How many addresses each of this node's blocks has taken: see {@link BlockUsage}. */
  /**
   * This node's Exclusive slot of {@code pool} with the most free addresses that is open (not being
   * released, converted or deleted), if any: the one to make Shared when an address must be
   * reachable from every node and no Shared slot has one.
   */
  public Optional<BlockObject> slotToShare(PoolView pool) {
    synchronized (ledger) {
      BlockObject best = null;
      long bestFree = 0;
      for (BlockUsage usage : BlockUsage.of(blocks, ledger.inUse())) {
        BlockObject block = usage.block();
        if (!block.ref().pool().equals(pool.name())
            || block.ref().hostPrefix()
            || block.closed()
            || block.ref().cidr().prefixLength() != pool.layout().blockSize()) {
          continue;
        }
        long free =
            pool.layout().assignableCount(block.ref().cidr()).longValue() - usage.allocated();
        if (free > bestFree) {
          best = block;
          bestFree = free;
        }
      }
      return Optional.ofNullable(best);
    }
  }

  /** This node's slot {@code slot} of {@code pool} as its watch last showed it, if it holds it. */
  public Optional<BlockObject> ownSlot(String pool, Cidr slot) {
    synchronized (ledger) {
      NodeBlocks.Own own = blocks.get(pool, slot);
      return own == null ? Optional.empty() : Optional.of(own.object);
    }
  }

  public List<BlockUsage> blockUsage() {
    synchronized (ledger) {
      return BlockUsage.of(blocks, ledger.inUse());
    }
  }
}
