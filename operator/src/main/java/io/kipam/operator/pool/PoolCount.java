package io.kipam.operator.pool;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.operator.kube.Blocks;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How many of a pool's addresses are allocated, from its blocks' {@code status.allocated}, with
 * every address of a slot counted once whatever the slot's state. The counts are written by the
 * daemons at different moments (coalesced, per block), so while a slot turns Shared its holder's
 * own count still includes addresses that its new sub-claims already report: adding both would
 * count them twice and could say "exhausted" with addresses free. Per slot:
 *
 * <ul>
 *   <li><b>Exclusive</b>: its own count plus its sub-claims (a chosen address in the holder's own
 *       slot is a sub-claim, and the holder's count leaves it out);
 *   <li><b>converting</b> ({@code status.share} asked, not yet Shared): the larger of its own count
 *       and its sub-claims', never their sum;
 *   <li><b>Shared</b>: its sub-claims only; the slot's own count is stale and not read;
 * </ul>
 *
 * and never more than the slot's assignable addresses. A sub-claim whose slot is not among the
 * blocks counts on its own. Where the counts disagree, the total errs low: the pool looks less full
 * than it is, and a node is told to try again rather than that the pool is exhausted.
 */
public final class PoolCount {

  private PoolCount() {}

  /** The allocated addresses of the pool whose blocks are {@code blocks}. */
  public static long allocated(List<IPBlock> blocks, Optional<PoolLayout> layout) {
    Map<String, Long> bySlot = new HashMap<>();
    Set<String> slots = new HashSet<>();
    for (IPBlock block : blocks) {
      if (Blocks.subClaim(block)) {
        bySlot.merge(block.getSpec().getParent(), Blocks.allocated(block), Long::sum);
      } else {
        slots.add(block.getMetadata().getName());
      }
    }
    long total = 0;
    for (IPBlock block : blocks) {
      if (Blocks.subClaim(block)) {
        if (!slots.contains(block.getSpec().getParent())) {
          total += Blocks.allocated(block);
        }
        continue;
      }
      long subClaims = bySlot.getOrDefault(block.getMetadata().getName(), 0L);
      long own = Blocks.allocated(block);
      long slot;
      if (Blocks.shared(block)) {
        slot = subClaims;
      } else if (converting(block)) {
        slot = Math.max(own, subClaims);
      } else {
        slot = own + subClaims;
      }
      total += Math.min(slot, assignable(block, layout));
    }
    return total;
  }

  private static boolean converting(IPBlock slot) {
    return slot.getStatus() != null && slot.getStatus().getShare() != null;
  }

  private static long assignable(IPBlock slot, Optional<PoolLayout> layout) {
    if (layout.isEmpty()) {
      return Long.MAX_VALUE;
    }
    try {
      BigInteger n = layout.get().assignableCount(Cidr.parse(slot.getSpec().getCidr()));
      return n.bitLength() < 63 ? n.longValue() : Long.MAX_VALUE;
    } catch (IllegalArgumentException e) {
      return Long.MAX_VALUE; // not a slot of this layout: its count is all there is to go by
    }
  }
}
