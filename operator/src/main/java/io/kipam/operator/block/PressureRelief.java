package io.kipam.operator.block;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.kube.Blocks;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Looks, when a block reports addresses in use, whether its node is short in its pool ({@link
 * PoolPressure}) and if so asks at once for an empty block of another node, so that capacity moves
 * to where it is needed; when there is none, asks the Exclusive slot with the most free addresses
 * to become Shared ({@link SlotConversion}). A sub-claim reporting its address also looks: its node
 * needed an address beyond its own slots, and the next Shared slot may be needed.
 */
final class PressureRelief {

  private final LayoutCache layouts = new LayoutCache();

  /**
   * @param pool the block's pool from the cache, if any
   * @param poolBlocks the cached blocks naming a pool
   */
  void relieve(
      IPBlock block,
      Optional<IPPool> pool,
      Function<String, List<IPBlock>> poolBlocks,
      BlockSteps steps,
      Instant now) {
    if (Blocks.allocated(block) == 0
        || pool.isEmpty()
        || pool.get().getMetadata().getDeletionTimestamp() != null) {
      return;
    }
    PoolLayout layout;
    try {
      layout = layouts.of(pool.get());
    } catch (IllegalArgumentException e) {
      return;
    }
    // A full slot, or a sub-claim (its node needed an address beyond its own slots).
    boolean subClaim = Blocks.subClaim(block);
    if (!subClaim && !PoolPressure.full(block, layout)) {
      return;
    }
    String name = pool.get().getMetadata().getName();
    List<IPBlock> siblings =
        poolBlocks.apply(name).stream().filter(b -> Blocks.belongsTo(b, pool.get())).toList();
    String node = block.getSpec().getNode();
    Optional<IPBlock> donor =
        subClaim ? Optional.empty() : PoolPressure.donorFor(node, layout, siblings);
    if (donor.isPresent()) {
      steps.request(
          donor.get(),
          "IPPool "
              + name
              + " is short: node "
              + node
              + " has no free address in its blocks and no block is left to claim",
          now);
      return;
    }
    SlotConversion.candidateFor(node, layout, siblings)
        .ifPresent(
            slot ->
                steps.requestShare(
                    slot,
                    "IPPool "
                        + name
                        + " is short: node "
                        + node
                        + " has no free address in its slots, no slot is left to claim and no"
                        + " empty slot to move",
                    now));
  }
}
