package io.kipam.operator.block;

import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.kube.Blocks;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * {@code spec.maxBlocksPerNode}, kept after the fact. kipam-node claims no slot over the limit, but
 * a node can still hold more: the limit was lowered after its claims, or two of its claims raced.
 * Such a node is reported, and its empty Exclusive slots beyond the limit are asked for at once by
 * the release handshake, without the idle delay; slots that hold addresses stay until they empty.
 * Pure: decided from the cached blocks of the pool.
 */
final class BlockLimit {

  /** A node over the limit: how many Exclusive slots of the pool it holds, and the limit. */
  record Over(String node, String pool, int held, int limit) {
    String describe() {
      return "node "
          + node
          + " holds "
          + held
          + " blocks of pool "
          + pool
          + ", over its spec.maxBlocksPerNode ("
          + limit
          + ")";
    }
  }

  private BlockLimit() {}

  /** The pool's {@code spec.maxBlocksPerNode}; 0 when it sets none (no limit). */
  static int limit(IPPool pool) {
    Integer limit = pool.getSpec() == null ? null : pool.getSpec().getMaxBlocksPerNode();
    return limit == null ? 0 : Math.max(limit, 0);
  }

  /** Whether the node of {@code block} holds more Exclusive slots of its pool than the limit. */
  static Optional<Over> over(IPBlock block, IPPool pool, List<IPBlock> poolBlocks) {
    int limit = limit(pool);
    String node = block.getSpec().getNode();
    if (limit == 0 || node == null) {
      return Optional.empty();
    }
    int held = held(node, poolBlocks).size();
    return held > limit
        ? Optional.of(new Over(node, pool.getMetadata().getName(), held, limit))
        : Optional.empty();
  }

  /**
   * Why {@code block} is to be taken back as one of its node's empty slots over the limit: of the
   * node's empty slots not in a round yet, the first by name, as many as the node holds too many.
   */
  static Optional<String> excess(IPBlock block, IPPool pool, List<IPBlock> poolBlocks) {
    Optional<Over> over = over(block, pool, poolBlocks);
    if (over.isEmpty()) {
      return Optional.empty();
    }
    int tooMany = over.get().held() - over.get().limit();
    boolean chosen =
        held(block.getSpec().getNode(), poolBlocks).stream()
            .filter(BlockLimit::emptyAndIdle)
            .sorted(Comparator.comparing(b -> b.getMetadata().getName()))
            .limit(tooMany)
            .anyMatch(b -> b.getMetadata().getUid().equals(block.getMetadata().getUid()));
    return chosen
        ? Optional.of(over.get().describe() + ": an empty block beyond it is taken back")
        : Optional.empty();
  }

  /** The node's Exclusive slots of the pool that are not being deleted. */
  private static List<IPBlock> held(String node, List<IPBlock> poolBlocks) {
    return poolBlocks.stream()
        .filter(b -> b.getSpec() != null && node.equals(b.getSpec().getNode()))
        .filter(b -> !Blocks.subClaim(b) && !Blocks.shared(b))
        .filter(b -> b.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private static boolean emptyAndIdle(IPBlock block) {
    return Blocks.reportedAllocated(block).map(n -> n == 0).orElse(false)
        && (block.getStatus() == null || block.getStatus().getRelease() == null)
        && !SlotConversion.underWay(block);
  }
}
