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
 * every second or so) writes a block's count only when it differs from what the block carries, as
 * the node's block watch last showed it, and at most once per block every {@code period}, so a
 * burst of allocations costs one or two status writes per block, on top of the one write each
 * allocation makes. A block that carries no count gets one, also 0: to kipam-operator a block
 * without a count is unknown, not empty, and is never asked for. Writes happen outside the ledger's
 * monitor, on the caller's thread.
 */
public final class BlockStatusReporter {

  private static final Logger log = LoggerFactory.getLogger(BlockStatusReporter.class);

  private final Ledger ledger;
  private final BlockStatusStore store;
  private final Clock clock;
  private final Duration period;
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
    for (BlockUsage usage : ledger.blocks().blockUsage()) {
      BlockObject block = usage.block();
      BlockRef ref = block.ref();
      current.add(ref);
      Long carried = block.allocated();
      long count = usage.allocated();
      Instant last = attempted.get(ref);
      if ((carried != null && carried == count)
          || block.resourceVersion() == null // a claim the watch has not shown yet
          || (last != null && now.isBefore(last.plus(period)))) {
        continue;
      }
      attempted.put(ref, now);
      try {
        if (store.writeAllocated(block, count)) {
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
    attempted.keySet().retainAll(current);
  }
}
