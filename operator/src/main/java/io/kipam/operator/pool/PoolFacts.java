package io.kipam.operator.pool;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.Optional;

/**
 * What the operator knows about one pool at one moment, from its caches and, while the pool is
 * being deleted, from the API: everything its status is computed from.
 *
 * @param generation the pool's {@code metadata.generation}
 * @param layout the pool's geometry, or empty when the spec does not build one
 * @param invalid why the spec does not build a layout, when it does not
 * @param blocks the pool's IPBlocks (of this pool object, not of an earlier one of the same name)
 * @param overlapping the oldest older pool of the same network whose CIDR overlaps this one
 * @param terminating while the pool is being deleted: what its deletion waits for
 */
public record PoolFacts(
    long generation,
    Optional<PoolLayout> layout,
    Optional<String> invalid,
    List<IPBlock> blocks,
    Optional<IPPool> overlapping,
    Optional<String> terminating) {}
