package io.kipam.node.alloc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@code status.allocated} of this node's blocks current, coalesced: {@link #report} (run
 * every second or so) writes a block's count only when it differs from what the block carries, and
 * at most once per block every {@code period}, so a burst of allocations costs one status write per
 * block, on top of the one write each allocation makes. A block with nothing taken that carries no
 * count is left alone. Writes happen outside the ledger's monitor, on the caller's thread.
 */
public final class BlockStatusReporter {

  private static final Logger log = LoggerFactory.getLogger(BlockStatusReporter.class);

  private final Ledger ledger;
  private final BlockStatusStore store;
  private final Clock clock;
  private final Duration period;
  private final Map<BlockRef, Long> written = new HashMap<>();
  private final Map<BlockRef, Instant> attempted = new HashMap<>();

  public BlockStatusReporter(Ledger ledger, BlockStatusStore store, Clock clock, Duration period) {
    this.ledger = ledger;
    this.store = store;
    this.clock = clock;
    this.period = period;
  }

  /** Writes the counts that changed, of blocks not written within the last period. */
  public synchronized void report() {
    if (!ledger.synced()) {
      return; // a count from a half-read record would be wrong
    }
    Instant now = clock.instant();
    Set<BlockRef> current = new HashSet<>();
    for (Ledger.BlockUsage usage : ledger.blockUsage()) {
      BlockRef ref = usage.block().ref();
      current.add(ref);
      Long known = written.containsKey(ref) ? written.get(ref) : usage.block().allocated();
      long count = usage.allocated();
      if (known == null ? count == 0 : known == count) {
        continue;
      }
      Instant last = attempted.get(ref);
      if (last != null && now.isBefore(last.plus(period))) {
        continue;
      }
      attempted.put(ref, now);
      try {
        if (store.writeAllocated(ref, count)) {
          written.put(ref, count);
          log.debug("block {} of pool {}: status.allocated {}", ref.cidr(), ref.pool(), count);
        }
      } catch (RuntimeException e) {
        log.warn(
            "cannot write status.allocated of block {} of pool {} yet: {}",
            ref.cidr(),
            ref.pool(),
            e.toString());
      }
    }
    written.keySet().retainAll(current);
    attempted.keySet().retainAll(current);
  }
}
