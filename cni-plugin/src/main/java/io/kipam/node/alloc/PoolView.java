package io.kipam.node.alloc;

import io.kipam.api.net.PoolLayout;
import java.time.Duration;
import java.util.Objects;

/**
 * What the allocator needs of an IPPool: its geometry, how long released addresses rest, how many
 * blocks one node may hold (0: no cap), and how many Nodes may use the pool ({@code nodes}, from
 * {@code status.nodes}; null when unknown, and then no slot is claimed Shared from birth).
 */
public record PoolView(
    String name, PoolLayout layout, Duration reuseDelay, int maxBlocksPerNode, Integer nodes) {
  public PoolView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(reuseDelay, "reuseDelay");
  }

  /** A pool whose number of Nodes is unknown. */
  public PoolView(String name, PoolLayout layout, Duration reuseDelay, int maxBlocksPerNode) {
    this(name, layout, reuseDelay, maxBlocksPerNode, null);
  }

  /** The same pool, used by {@code nodes} Nodes. */
  public PoolView withNodes(Integer nodes) {
    return new PoolView(name, layout, reuseDelay, maxBlocksPerNode, nodes);
  }
}
