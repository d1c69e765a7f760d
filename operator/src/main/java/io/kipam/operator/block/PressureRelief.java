package io.kipam.operator.block;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.kube.Blocks;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Looks, when a block reports addresses in use, whether its node is short in its pool ({@link
 * PoolPressure}) and if so asks at once for an empty block of another node, so that capacity moves
 * to where it is needed; when there is none, asks the Exclusive slot with the most free addresses
 * to become Shared ({@link SlotConversion}). A sub-claim reporting its address also looks: its node
 * needed an address beyond its own slots, and the next Shared slot may be needed.
 *
 * <p>A request is written to another block than the one looked at, with the resourceVersion of its
 * cached copy; when that block changed meanwhile the write fails with a conflict, and the change (a
 * new count of the donor or the slot) is no reason to look at the short node again, while the short
 * node, unable to allocate, writes nothing more that would be. So each method says whether a
 * request went unwritten, and the caller looks again soon. The same holds while a slot another node
 * just claimed has no count yet: the full node waits for that count, and its arrival (a slot that
 * is not full) starts no look of its own.
 */
final class PressureRelief {

  /** How recent a sub-claim makes a node without Exclusive slots count as short. */
  static final java.time.Duration RECENT = java.time.Duration.ofSeconds(60);

  private final LayoutCache layouts = new LayoutCache();

  /**
   * @param pool the block's pool from the cache, if any
   * @param poolBlocks the cached blocks naming a pool
   * @return whether a request was decided but its write conflicted, or no slot can be decided on
   *     until a just-claimed slot reports its count: look again soon
   */
  boolean relieve(
      IPBlock block,
      Optional<IPPool> pool,
      Function<String, List<IPBlock>> poolBlocks,
      BlockSteps steps,
      Instant now) {
    Optional<PoolLayout> usable = Blocks.allocated(block) == 0 ? Optional.empty() : layout(pool);
    if (usable.isEmpty()) {
      return false;
    }
    PoolLayout layout = usable.get();
    // A full slot, or a sub-claim (its node needed an address beyond its own slots).
    boolean subClaim = Blocks.subClaim(block);
    if (!subClaim && !PoolPressure.full(block, layout)) {
      return false;
    }
    String name = pool.get().getMetadata().getName();
    List<IPBlock> siblings = siblings(pool.get(), poolBlocks);
    String node = block.getSpec().getNode();
    Optional<IPBlock> donor =
        subClaim ? Optional.empty() : PoolPressure.donorFor(node, layout, siblings);
    if (donor.isPresent()) {
      return !askBack(steps, donor.get(), name, node, "has no free address in its blocks", now);
    }
    Optional<IPBlock> slot = SlotConversion.candidateFor(node, layout, siblings, now);
    if (slot.isPresent()) {
      return !askShare(steps, slot.get(), name, node, now);
    }
    return SlotConversion.awaitingCount(node, layout, siblings, now);
  }

  /**
   * A slot turned Shared, or a holder refused to give a block back (or either is looked at again on
   * a resync). A node that was short while that conversion or release round was under way could not
   * be served then, and its failed ADDs left nothing behind to look at; so every node of the pool
   * that is short now is looked at once more, and the first one a conversion could serve gets it.
   * Short here means: holds Exclusive slots of the pool, all full, or holds no Exclusive slot but
   * made a sub-claim within {@link #RECENT} (it needed an address beyond its slots a moment ago).
   * The slot's former holder, whose only slot is now Shared, is not short for that alone.
   *
   * @return whether a request was decided but its write conflicted: look again soon
   */
  boolean relieveShortNodes(
      Optional<IPPool> pool,
      Function<String, List<IPBlock>> poolBlocks,
      BlockSteps steps,
      Instant now) {
    return relieveShortNodes(pool, poolBlocks, steps, now, Set.of());
  }

  /**
   * As above, with {@code demanding}: the nodes that have recorded demand for the pool on their
   * Node ({@code kipam.io/demand}). Each is short, whether or not it holds a slot: an empty slot of
   * another node is asked back for it first (it can then claim it), else a slot is asked to become
   * Shared.
   *
   * @return whether a request was decided but its write conflicted: look again soon
   */
  boolean relieveShortNodes(
      Optional<IPPool> pool,
      Function<String, List<IPBlock>> poolBlocks,
      BlockSteps steps,
      Instant now,
      Set<String> demanding) {
    Optional<PoolLayout> usable = layout(pool);
    if (usable.isEmpty()) {
      return false;
    }
    PoolLayout layout = usable.get();
    String name = pool.get().getMetadata().getName();
    List<IPBlock> siblings = siblings(pool.get(), poolBlocks);
    Set<String> nodes = new TreeSet<>();
    siblings.stream().map(b -> b.getSpec().getNode()).filter(Objects::nonNull).forEach(nodes::add);
    nodes.addAll(demanding);
    for (String node : nodes) {
      boolean demands = demanding.contains(node);
      if (!demands && !shortNow(node, siblings, layout, now)) {
        continue;
      }
      if (demands) {
        Optional<IPBlock> donor = PoolPressure.donorFor(node, layout, siblings, true);
        if (donor.isPresent() && !SlotConversion.underWay(donor.get())) {
          return !askBack(steps, donor.get(), name, node, "recorded demand for it", now);
        }
      }
      Optional<IPBlock> candidate = SlotConversion.candidateFor(node, layout, siblings, now);
      if (candidate.isPresent()) {
        return !askShare(steps, candidate.get(), name, node, now);
      }
    }
    return false;
  }

  /** The pool's layout, unless the pool is gone, being deleted or describes no layout. */
  private Optional<PoolLayout> layout(Optional<IPPool> pool) {
    if (pool.isEmpty() || pool.get().getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    try {
      return Optional.of(layouts.of(pool.get()));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static List<IPBlock> siblings(IPPool pool, Function<String, List<IPBlock>> poolBlocks) {
    return poolBlocks.apply(pool.getMetadata().getName()).stream()
        .filter(b -> Blocks.belongsTo(b, pool))
        .toList();
  }

  /** Asks for {@code donor} back (the release handshake) because {@code node} is short. */
  private static boolean askBack(
      BlockSteps steps, IPBlock donor, String pool, String node, String why, Instant now) {
    return steps.request(
        donor,
        "IPPool " + pool + " is short: node " + node + " " + why + " and no block is left to claim",
        now);
  }

  private static boolean askShare(
      BlockSteps steps, IPBlock slot, String pool, String node, Instant now) {
    return steps.requestShare(
        slot,
        "IPPool "
            + pool
            + " is short: node "
            + node
            + " has no free address in its slots, no slot is left to claim and no empty slot to"
            + " move",
        now);
  }

  private static boolean shortNow(
      String node, List<IPBlock> siblings, PoolLayout layout, Instant now) {
    List<IPBlock> exclusive =
        siblings.stream()
            .filter(b -> node.equals(b.getSpec().getNode()))
            .filter(b -> !Blocks.subClaim(b) && !Blocks.shared(b))
            .toList();
    if (!exclusive.isEmpty()) {
      return exclusive.stream().allMatch(b -> PoolPressure.full(b, layout));
    }
    return siblings.stream()
        .filter(b -> node.equals(b.getSpec().getNode()) && Blocks.subClaim(b))
        .map(b -> b.getMetadata().getCreationTimestamp())
        .filter(Objects::nonNull)
        .map(Instant::parse)
        .anyMatch(created -> created.isAfter(now.minus(RECENT)));
  }
}
