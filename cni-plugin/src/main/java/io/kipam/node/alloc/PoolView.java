package io.kipam.node.alloc;

import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * What the allocator needs of an IPPool: its geometry, how long released addresses rest, how many
 * blocks one node may hold (0: no cap), how many Nodes may use the pool ({@code nodes}, from {@code
 * status.nodes}; null when unknown, and then no slot is claimed Shared from birth), and how many of
 * its addresses are free anywhere in the cluster ({@code available}, from {@code status.available};
 * null when unknown), and the isolated network its addresses belong to ({@code spec.network};
 * {@link #PRIMARY} for the pools without one). {@code countedAt}: when kipam-operator took that
 * count ({@code status.countedAt}; null when unknown); {@code lastChange}: when this node last saw
 * one of its own addresses of the pool allocated or released (null: none since it started). A count
 * is trusted to say "exhausted" only when it is newer than that ({@link NoAddress}).
 */
public record PoolView(
    String name,
    PoolLayout layout,
    Duration reuseDelay,
    int maxBlocksPerNode,
    Integer nodes,
    BigInteger available,
    String network,
    Instant countedAt,
    Instant lastChange) {

  /** The network of every pool without {@code spec.network}: the primary network. */
  public static final String PRIMARY = "";

  public PoolView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(reuseDelay, "reuseDelay");
    network = network == null ? PRIMARY : network;
  }

  /** A pool whose count is of unknown time. */
  public PoolView(
      String name,
      PoolLayout layout,
      Duration reuseDelay,
      int maxBlocksPerNode,
      Integer nodes,
      BigInteger available,
      String network) {
    this(name, layout, reuseDelay, maxBlocksPerNode, nodes, available, network, null, null);
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
    return with(nodes, available, network, countedAt, lastChange);
  }

  /** The same pool, with {@code available} addresses free in the cluster (null: unknown). */
  public PoolView withAvailable(BigInteger available) {
    return with(nodes, available, network, countedAt, lastChange);
  }

  /**
   * The same pool, its count taken at {@code countedAt} and this node's own last allocation or
   * release in it at {@code lastChange} (either null: unknown, none).
   */
  public PoolView withCount(Instant countedAt, Instant lastChange) {
    return with(nodes, available, network, countedAt, lastChange);
  }

  /** The same pool, of the isolated network {@code network} ({@link #PRIMARY} or null: none). */
  public PoolView withNetwork(String network) {
    return with(nodes, available, network, countedAt, lastChange);
  }

  /** The same geometry and limits, with what the cluster and this node know of the pool now. */
  private PoolView with(
      Integer nodes, BigInteger available, String network, Instant countedAt, Instant lastChange) {
    return new PoolView(
        name,
        layout,
        reuseDelay,
        maxBlocksPerNode,
        nodes,
        available,
        network,
        countedAt,
        lastChange);
  }

  /** How the pool's network reads in a message. */
  public String networkName() {
    return networkName(network);
  }

  /** How the pools' network {@code network} reads in a message. */
  public static String networkName(String network) {
    return network == null || network.isEmpty() ? "the primary network" : "network " + network;
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
