package io.kipam.operator.cli;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PoolGeometry;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.pool.PoolCount;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One pool's usage, counted as kipam-operator counts it for the pool's status ({@code
 * PoolStatusCalculator}): size is the pool's assignable addresses, allocated counted from its
 * blocks' {@code status.allocated}, each slot's addresses once ({@link PoolCount}), available the
 * difference, never below 0. The pool's own {@code status} is used when the operator has written it
 * for the current generation; else the same numbers are computed here. Per node: the blocks and
 * sub-claims it holds, their assignable addresses, their reported allocations, and the IPAddress
 * objects on it.
 *
 * @param size null when the spec describes no pool
 * @param fromStatus whether size, allocated and available are the pool's status
 */
record PoolUsage(
    String name,
    String cidr,
    BigInteger size,
    long allocated,
    BigInteger available,
    int blocks,
    boolean fromStatus,
    List<NodeUsage> nodes) {

  /** The name under which Shared slots (held by no node) are listed. */
  static final String SHARED = "(shared slots)";

  /**
   * @param blocks exclusive blocks (or, for {@link #SHARED}, slots)
   * @param subClaims host-prefix sub-claims under Shared slots
   * @param size assignable addresses of those blocks (a Shared slot's are its sub-claims')
   * @param allocated their {@code status.allocated}, summed
   * @param addresses IPAddresses of the pool whose {@code spec.node} is this node
   */
  record NodeUsage(
      String node, int blocks, int subClaims, BigInteger size, long allocated, long addresses) {}

  static PoolUsage of(IPPool pool, List<IPBlock> blocks, List<IPAddress> addresses) {
    String name = pool.getMetadata().getName();
    Optional<PoolLayout> layout = layout(pool);
    Map<String, long[]> counts = new TreeMap<>(); // blocks, subClaims, allocated, addresses
    Map<String, BigInteger> sizes = new TreeMap<>();
    List<IPBlock> ofPool = blocks.stream().filter(b -> Blocks.belongsTo(b, pool)).toList();
    long allocated = PoolCount.allocated(ofPool, layout);
    int poolBlocks = 0;
    for (IPBlock block : blocks) {
      if (!Blocks.belongsTo(block, pool)) {
        continue;
      }
      poolBlocks++;
      String node = block.getSpec().getNode();
      boolean sub = Blocks.subClaim(block);
      String key = node == null || node.isEmpty() ? SHARED : node;
      long[] c = counts.computeIfAbsent(key, k -> new long[4]);
      c[sub ? 1 : 0]++;
      c[2] += Blocks.allocated(block);
      // A sub-claim holds one address; a Shared slot's addresses are counted by its sub-claims.
      BigInteger size =
          sub ? BigInteger.ONE : Blocks.shared(block) ? BigInteger.ZERO : blockSize(layout, block);
      sizes.merge(key, size, BigInteger::add);
    }
    for (IPAddress address : addresses) {
      String node = address.getSpec().getNode();
      counts.computeIfAbsent(node == null || node.isEmpty() ? "-" : node, k -> new long[4])[3]++;
    }
    List<NodeUsage> nodes =
        counts.entrySet().stream()
            .map(
                e ->
                    new NodeUsage(
                        e.getKey(),
                        (int) e.getValue()[0],
                        (int) e.getValue()[1],
                        sizes.getOrDefault(e.getKey(), BigInteger.ZERO),
                        e.getValue()[2],
                        e.getValue()[3]))
            .toList();
    String cidr = cidr(pool);
    var status = pool.getStatus();
    boolean current =
        status != null
            && status.getCapacity() != null
            && status.getAllocated() != null
            && status.getAvailable() != null
            && status.getObservedGeneration() != null
            && status.getObservedGeneration().equals(pool.getMetadata().getGeneration());
    if (current) {
      return new PoolUsage(
          name,
          cidr,
          new BigInteger(status.getCapacity()),
          status.getAllocated(),
          new BigInteger(status.getAvailable()),
          status.getBlocks() == null ? poolBlocks : status.getBlocks(),
          true,
          nodes);
    }
    BigInteger size = layout.map(PoolLayout::assignableCount).orElse(null);
    BigInteger available =
        size == null ? null : size.subtract(BigInteger.valueOf(allocated)).max(BigInteger.ZERO);
    return new PoolUsage(name, cidr, size, allocated, available, poolBlocks, false, nodes);
  }

  private static Optional<PoolLayout> layout(IPPool pool) {
    try {
      return Optional.of(PoolGeometry.of(pool.getSpec()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  private static BigInteger blockSize(Optional<PoolLayout> layout, IPBlock block) {
    try {
      Cidr cidr = Cidr.parse(block.getSpec().getCidr());
      return layout.map(l -> l.assignableCount(cidr)).orElse(cidr.size());
    } catch (RuntimeException e) {
      return BigInteger.ZERO;
    }
  }

  /** {@code spec.cidr}, with the range when one narrows it. */
  private static String cidr(IPPool pool) {
    var spec = pool.getSpec();
    if (spec == null || spec.getCidr() == null) {
      return "-";
    }
    String cidr = spec.getCidr();
    if (spec.getRangeStart() != null || spec.getRangeEnd() != null) {
      cidr +=
          " ("
              + (spec.getRangeStart() == null ? "" : spec.getRangeStart())
              + "-"
              + (spec.getRangeEnd() == null ? "" : spec.getRangeEnd())
              + ")";
    }
    return cidr;
  }
}
