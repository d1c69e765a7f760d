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
 * null when unknown), and the isolated network its addresses belong to ({@code spec.network};
 * {@link #PRIMARY} for the pools without one).
 */
public record PoolView(
    String name,
    PoolLayout layout,
    Duration reuseDelay,
    int maxBlocksPerNode,
    Integer nodes,
    BigInteger available,
    String network) {

  /** The network of every pool without {@code spec.network}: the primary network. */
  public static final String PRIMARY = "";

  public PoolView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(reuseDelay, "reuseDelay");
    network = network == null ? PRIMARY : network;
  }

  /** A pool of the primary network whose number of Nodes and free addresses are unknown. */
  public PoolView(String name, PoolLayout layout, Duration reuseDelay, int maxBlocksPerNode) {
    this(name, layout, reuseDelay, maxBlocksPerNode, null, null, PRIMARY);
  }

  /** A pool of the primary network. */
  public PoolView(
      String name,
      PoolLayout layout,
      Duration reuseDelay,
      int maxBlocksPerNode,
      Integer nodes,
      BigInteger available) {
    this(name, layout, reuseDelay, maxBlocksPerNode, nodes, available, PRIMARY);
  }

  /** The same pool, used by {@code nodes} Nodes. */
  public PoolView withNodes(Integer nodes) {
    return new PoolView(name, layout, reuseDelay, maxBlocksPerNode, nodes, available, network);
  }

  /** The same pool, with {@code available} addresses free in the cluster (null: unknown). */
  public PoolView withAvailable(BigInteger available) {
    return new PoolView(name, layout, reuseDelay, maxBlocksPerNode, nodes, available, network);
  }

  /** The same pool, of the isolated network {@code network} ({@link #PRIMARY} or null: none). */
  public PoolView withNetwork(String network) {
    return new PoolView(name, layout, reuseDelay, maxBlocksPerNode, nodes, available, network);
  }

  /** How the pool's network reads in a message. */
  public String networkName() {
    return network.isEmpty() ? "the primary network" : "network " + network;
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
