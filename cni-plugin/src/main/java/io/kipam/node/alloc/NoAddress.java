package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;

/**
 * The refusal of an ADD that finds no address this node can reach: "exhausted" (code 100) only when
 * kipam-operator last counted none free in the whole pool ({@code status.available} 0, or not
 * counted yet). While it counts some — in other nodes' slots, resting, or behind claims that met
 * another node's — the answer is "short" (code 11, try again), as the demand the refusal records
 * makes kipam-operator turn a slot Shared for this node.
 */
final class NoAddress {

  /** Blocks counted for the message, at most: IPv6 pools have astronomically many. */
  static final long USABLE_BLOCKS_COUNTED = 65_536;

  private NoAddress() {}

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
    if (pool.hasFreeElsewhere()) {
      return new AllocationException(
          AllocationException.Reason.POOL_SHORT,
          pool.name(),
          "pool "
              + pool.name()
              + " has "
              + pool.available()
              + " free addresses, none of them reachable from node "
              + node
              + " yet: "
              + why
              + counts
              + "); its demand is recorded for kipam-operator, which makes a slot Shared; try"
              + " again");
    }
    return new AllocationException(
        AllocationException.Reason.POOL_EXHAUSTED,
        pool.name(),
        "pool " + pool.name() + " is exhausted for node " + node + ": " + why + counts + ")");
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
