package io.kipam.operator.pool;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.Optional;

/**
 * What the operator knows about one pool at one moment, from its caches and from the API (every
 * pool, when deciding whether it may become Ready; its addresses, while it is being deleted):
 * everything its status is computed from.
 *
 * @param generation the pool's {@code metadata.generation}
 * @param layout the pool's geometry, or empty when the spec does not build one
 * @param invalid why the spec does not build a layout, when it does not
 * @param blocks the pool's IPBlocks (of this pool object, not of an earlier one of the same name)
 * @param overlapping the pool that keeps this one from being Ready: one of its network whose CIDR
 *     overlaps this one and that comes first in {@link PoolOverlaps#PRECEDENCE}
 * @param terminating while the pool is being deleted: what its deletion waits for
 */
public record PoolFacts(
    long generation,
    Optional<PoolLayout> layout,
    Optional<String> invalid,
    List<IPBlock> blocks,
    Optional<IPPool> overlapping,
    Optional<String> terminating) {

  /** These facts with {@code overlapping} as the pool that keeps this one from being Ready. */
  PoolFacts withOverlapping(Optional<IPPool> overlapping) {
    return new PoolFacts(generation, layout, invalid, blocks, overlapping, terminating);
  }
}
