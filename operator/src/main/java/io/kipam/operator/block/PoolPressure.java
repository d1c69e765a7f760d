package io.kipam.operator.block;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.operator.kube.Blocks;
import java.math.BigInteger;
import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * When a pool is short, capacity must move to where it is needed without waiting for the idle
 * delay. A pool is short for a node when every usable block of the pool is claimed and every block
 * the node holds is full (its daemon reports as many allocated as the block has assignable
 * addresses). Then the operator asks at once for one empty block held by another node (the
 * handshake is the same; the daemon still refuses if an allocation has meanwhile landed in it), so
 * that the short node can claim it. Pure: decides from cached blocks and the pool's layout.
 *
 * <p>A node that holds no block of the pool at all is seen only through its demand (the annotation
 * {@code kipam.io/demand} its daemon writes on its Node when an ADD finds the pool short): it is
 * then short too.
 */
final class PoolPressure {

  private PoolPressure() {}

  /**
   * The empty block of another node to ask for because {@code node} is short in the pool, if {@code
   * node} is short and such a block exists.
   */
  static Optional<IPBlock> donorFor(String node, PoolLayout layout, Collection<IPBlock> blocks) {
    return donorFor(node, layout, blocks, false);
  }

  /**
   * As above; {@code demands}: {@code node} has recorded demand for the pool, so it is short even
   * when it holds no block of it.
   */
  static Optional<IPBlock> donorFor(
      String node, PoolLayout layout, Collection<IPBlock> blocks, boolean demands) {
    // Slots only: a sub-claim is one address of a Shared slot, not a slot of its own.
    Collection<IPBlock> live =
        blocks.stream()
            .filter(b -> b.getMetadata().getDeletionTimestamp() == null)
            .filter(b -> !Blocks.subClaim(b))
            .toList();
    Collection<IPBlock> own =
        live.stream()
            .filter(b -> !Blocks.shared(b))
            .filter(b -> node.equals(b.getSpec().getNode()))
            .toList();
    if ((own.isEmpty() && !demands)
        || !own.stream().allMatch(b -> full(b, layout))
        || unclaimedBlockLeft(layout, live)) {
      return Optional.empty();
    }
    return live.stream()
        .filter(b -> !Blocks.shared(b))
        .filter(b -> !node.equals(b.getSpec().getNode()))
        .filter(b -> Blocks.reportedAllocated(b).orElse(-1L) == 0)
        .filter(b -> b.getStatus() == null || b.getStatus().getRelease() == null)
        .min(Comparator.comparing(b -> b.getMetadata().getName()));
  }

  static boolean full(IPBlock block, PoolLayout layout) {
    BigInteger assignable;
    try {
      assignable = layout.assignableCount(Cidr.parse(block.getSpec().getCidr()));
    } catch (IllegalArgumentException e) {
      return false; // not a block of this layout: say nothing about it
    }
    return BigInteger.valueOf(Blocks.allocated(block)).compareTo(assignable) >= 0;
  }

  /**
   * Whether some usable block of the pool is not claimed. Usable blocks are visited lazily and the
   * first unclaimed one ends the walk, so at most one more block than are claimed is visited: a /64
   * pool costs no more than its claimed blocks.
   */
  static boolean unclaimedBlockLeft(PoolLayout layout, Collection<IPBlock> blocks) {
    Set<String> claimed =
        blocks.stream().map(b -> b.getSpec().getCidr()).collect(Collectors.toSet());
    for (Cidr usable : layout.usableBlocks()) {
      if (!claimed.contains(usable.toString())) {
        return true;
      }
    }
    return false;
  }
}
