package io.kipam.node.alloc;

import io.kipam.api.net.PoolLayout;
import java.time.Duration;
import java.util.Objects;

/**
 * What the allocator needs of an IPPool: its geometry, how long released addresses rest, and how
 * many blocks one node may hold (0: no cap).
 */
public record PoolView(String name, PoolLayout layout, Duration reuseDelay, int maxBlocksPerNode) {
  public PoolView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(reuseDelay, "reuseDelay");
  }
}
