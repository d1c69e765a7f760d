package io.kipam.node.alloc;

import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.time.Duration;
import java.util.Objects;

/**
 * What the allocator needs of an IPPool: its geometry, how long released addresses rest, how many
 * blocks one node may hold (0: no cap), how many Nodes may use the pool ({@code nodes}, from {@code
 * status.nodes}; null when unknown, and then no slot is claimed Shared from birth), and how many of
 * its addresses are free anywhere in the cluster ({@code available}, from {@code status.available};
 * null when unknown).
 */
public record PoolView(
    String name,
    PoolLayout layout,
    Duration reuseDelay,
    int maxBlocksPerNode,
    Integer nodes,
    BigInteger available) {
  public PoolView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(reuseDelay, "reuseDelay");
  }

  /** A pool whose number of Nodes and free addresses are unknown. */
  public PoolView(String name, PoolLayout layout, Duration reuseDelay, int maxBlocksPerNode) {
    this(name, layout, reuseDelay, maxBlocksPerNode, null, null);
  }

  /** The same pool, used by {@code nodes} Nodes. */
  public PoolView withNodes(Integer nodes) {
    return new PoolView(name, layout, reuseDelay, maxBlocksPerNode, nodes, available);
  }

  /** The same pool, with {@code available} addresses free in the cluster (null: unknown). */
  public PoolView withAvailable(BigInteger available) {
    return new PoolView(name, layout, reuseDelay, maxBlocksPerNode, nodes, available);
  }

  /**
   * Whether kipam-operator last counted a free address somewhere in the pool: an ADD that finds
   * none it can reach is then told to try again (a slot is being made reachable), not that the pool
   * is exhausted.
   */
  public boolean hasFreeElsewhere() {
    return available != null && available.signum() > 0;
  }
}
