package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.runtime.Checkpoint;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The holder's half of converting an Exclusive slot to Shared. kipam-operator asks by writing
 * {@code status.share}; from the moment this node's block watch shows the request, nothing is
 * allocated in the slot from memory ({@link BlockObject#closed}). Then {@link #convert}, in this
 * order: creates a sub-claim (this node, parent = the slot) of every address of the slot this node
 * holds or might hold — held, being allocated, of uncertain state, or resting after a release —
 * that no sub-claim covers yet; and only when none is missing writes {@code status.mode: Shared},
 * tested against the slot's UID and the request's round. From then on every node, this one
 * included, claims the slot's free addresses through sub-claims, and this node's IPAddresses of the
 * slot are held through its own sub-claims, each given back after its address has rested.
 *
 * <p>Each call finishes what an earlier one (or an earlier process) left half done, as long as the
 * request stands: sub-claims already made are found by the node's block watch and not made again. A
 * sub-claim create answered 409 means a sub-claim of the address exists: this node's, not yet seen,
 * which the block watch brings and the next round counts; or another node's, which never counts
 * (see {@link SlotConversions#covered}), so the slot is not written Shared while it exists. Writes
 * happen outside the ledger's monitor.
 */
public final class SlotConverter {

  private static final Logger log = LoggerFactory.getLogger(SlotConverter.class);

  /**
   * How long an address whose sub-claim create met another's sub-claim is left alone: it is this
   * node's own sub-claim, which the block watch brings at once and which then counts, or another
   * node's, which may stay for good; either way trying again every round only writes.
   */
  static final Duration TAKEN_RETRY = Duration.ofSeconds(60);

  private final Ledger ledger;
  private final AllocationStore store;
  private final BlockStatusStore status;
  private final LongSupplier nanoTime;

  /** Addresses (pool and IP) met sub-claimed, and when a create may be tried again. */
  private final Map<AddressKey, Long> taken = new HashMap<>();

  public SlotConverter(Ledger ledger, AllocationStore store, BlockStatusStore status) {
    this(ledger, store, status, System::nanoTime);
  }

  SlotConverter(
      Ledger ledger, AllocationStore store, BlockStatusStore status, LongSupplier nanoTime) {
    this.ledger = ledger;
    this.store = store;
    this.status = status;
    this.nanoTime = nanoTime;
  }

  /** Moves every requested conversion of this node's slots as far as it can go now. */
  public synchronized void convert() {
    for (Conversion conversion : ledger.blocks().pendingConversions()) {
      BlockRef slot = conversion.slot().ref();
      try {
        if (subClaimAll(slot, conversion)) {
          writeShared(slot, conversion.slot().shareRequestedAt());
        }
      } catch (RuntimeException e) {
        log.info(
            "cannot finish converting slot {} of pool {} to Shared yet: {}",
            slot.cidr(),
            slot.pool(),
            e.toString());
      }
    }
  }

  /** Sub-claims every missing address; true when none was missing, so the mode may be written. */
  private boolean subClaimAll(BlockRef slot, Conversion conversion) {
    if (conversion.missing().isEmpty()) {
      return true;
    }
    long now = nanoTime.getAsLong();
    taken.values().removeIf(retry -> retry - now <= 0);
    for (IpAddress ip : conversion.missing()) {
      AddressKey address = new AddressKey(slot.pool(), ip);
      if (taken.containsKey(address)) {
        continue;
      }
      String uid;
      try {
        uid = store.claimSubClaim(slot.pool(), ip, ledger.node(), slot.cidr());
      } catch (WriteOutcomeUnknownException e) {
        // If it happened, the node's block watch brings it and the next round counts it.
        ledger.blocks().subClaimInDoubt(slot.pool(), ip);
        throw e;
      }
      if (uid == null) {
        ledger.blocks().subClaimTaken(slot.pool(), ip);
        taken.put(address, now + TAKEN_RETRY.toNanos());
        log.warn(
            "address {} of slot {} being converted is sub-claimed already: it counts once this"
                + " node's block watch shows the sub-claim as this node's; another node's never"
                + " does, and the slot stays closed and Exclusive while it exists (tried again in"
                + " {} s)",
            ip,
            slot.cidr(),
            TAKEN_RETRY.toSeconds());
        continue;
      }
      ledger
          .blocks()
          .conversionSubClaimed(new BlockRef(slot.pool(), Cidr.of(ip, ip.family().bits()), uid));
      log.info(
          "sub-claimed {} of slot {} of pool {} for node {}, converting the slot to Shared",
          ip,
          slot.cidr(),
          slot.pool(),
          ledger.node());
      Checkpoint.reach("daemon-subclaimed", slot.pool());
    }
    // Decide again on the ledger's state now: the next round writes the mode when nothing is
    // missing any more.
    return false;
  }

  private void writeShared(BlockRef slot, String round) {
    if (status.writeShared(slot, round)) {
      log.info(
          "slot {} of pool {} is Shared now (conversion requested at {}); node {} holds its"
              + " addresses through sub-claims",
          slot.cidr(),
          slot.pool(),
          round,
          ledger.node());
    } else {
      log.info(
          "slot {} of pool {} changed before its conversion could be written; deciding again",
          slot.cidr(),
          slot.pool());
    }
  }
}
