package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import java.time.Duration;

/**
 * The refusal of an ADD that finds no address this node can reach. "Exhausted" (code 100) only on
 * kipam-operator's count of none free in the whole pool ({@code status.available} 0) that is fresh
 * for the question: taken more than {@link #COUNT_LAG} after this node's own last allocation or
 * release in the pool ({@link PoolView#lastChange}), so it includes them. Otherwise the answer is
 * "short" (code 11, try again), saying what it waits for: a first count, a newer count, or a slot
 * made reachable — some addresses are free in other nodes' slots, resting, or behind claims that
 * met another node's, and the demand the refusal records makes kipam-operator turn a slot Shared
 * for this node. When in doubt the answer is 11: the runtime retries it.
 */
final class NoAddress {

  /** Blocks counted for the message, at most: IPv6 pools have astronomically many. */
  static final long USABLE_BLOCKS_COUNTED = 65_536;

  /**
   * How much later than this node's last change in the pool a count must be to include it: the
   * daemon writes a block's count within 2 s (KIPAM_BLOCK_STATUS_SECONDS), kipam-operator sums
   * within 2 s, and the rest covers the clock skew between this node and kipam-operator.
   */
  static final Duration COUNT_LAG = Duration.ofSeconds(10);

  /** What a refusal says, from the pool's count and its time. */
  enum Verdict {
    /** kipam-operator has not counted the pool, or not said when. */
    NOT_COUNTED,
    /** The count is not newer than this node's last allocation or release in the pool. */
    STALE,
    /** The count shows free addresses, none of which this node can reach yet. */
    FREE_ELSEWHERE,
    /** A fresh count shows none free. */
    EXHAUSTED
  }

  private NoAddress() {}

  static Verdict verdict(PoolView pool) {
    if (pool.available() == null || pool.countedAt() == null) {
      return Verdict.NOT_COUNTED;
    }
    if (pool.lastChange() != null && !pool.countedAt().isAfter(pool.lastChange().plus(COUNT_LAG))) {
      return Verdict.STALE;
    }
    return pool.hasFreeElsewhere() ? Verdict.FREE_ELSEWHERE : Verdict.EXHAUSTED;
  }

  /**
   * @param node this node
   * @param blocks how many blocks of the pool this node holds
   * @param why what the allocator tried
   */
  static AllocationException refusal(PoolView pool, String node, int blocks, String why) {
    String counts =
        " (this node holds "
            + blocks
            + " blocks of the pool; the pool has "
            + pool.layout().assignableCount()
            + " assignable addresses in "
            + usableBlocks(pool)
            + " blocks";
    String demand =
        "); its demand is recorded for kipam-operator, which makes a slot Shared; try again";
    return switch (verdict(pool)) {
      case EXHAUSTED ->
          new AllocationException(
              AllocationException.Reason.POOL_EXHAUSTED,
              pool.name(),
              "pool " + pool.name() + " is exhausted for node " + node + ": " + why + counts + ")");
      case FREE_ELSEWHERE ->
          shortOf(
              pool,
              "pool "
                  + pool.name()
                  + " has "
                  + pool.available()
                  + " free addresses, none of them reachable from node "
                  + node
                  + " yet: "
                  + why
                  + counts
                  + demand);
      case NOT_COUNTED ->
          shortOf(
              pool,
              "pool "
                  + pool.name()
                  + " has no address node "
                  + node
                  + " can reach, and kipam-operator has not counted the pool yet (status.available,"
                  + " status.countedAt): waiting for its count: "
                  + why
                  + counts
                  + demand);
      case STALE ->
          shortOf(
              pool,
              "pool "
                  + pool.name()
                  + " has no address node "
                  + node
                  + " can reach; kipam-operator's last count ("
                  + pool.available()
                  + " free, taken at "
                  + pool.countedAt()
                  + ") is not newer than this node's last allocation or release in the pool (at "
                  + pool.lastChange()
                  + "): waiting for a newer count: "
                  + why
                  + counts
                  + demand);
    };
  }

  private static AllocationException shortOf(PoolView pool, String message) {
    return new AllocationException(AllocationException.Reason.POOL_SHORT, pool.name(), message);
  }

  /**
   * How many blocks of the pool hold an assignable address (a range or excludes may leave many
   * blocks of its CIDR without one), counted up to {@link #USABLE_BLOCKS_COUNTED}.
   */
  static String usableBlocks(PoolView pool) {
    long n = 0;
    for (Cidr ignored : pool.layout().usableBlocks()) {
      if (++n > USABLE_BLOCKS_COUNTED) {
        return "more than " + USABLE_BLOCKS_COUNTED;
      }
    }
    return Long.toString(n);
  }
}
