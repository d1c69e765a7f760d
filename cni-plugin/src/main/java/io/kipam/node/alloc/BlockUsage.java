package io.kipam.node.alloc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One of this node's blocks and how many of its addresses are taken: held by an IPAddress object
 * (readable or not), of uncertain state, or being written. An allocation being written counts: in
 * host-prefix mode it is all a fresh block holds, and a count of 0 would let the operator ask for
 * the block as idle. A write that fails is taken off the count at the next report.
 */
public record BlockUsage(BlockObject block, long allocated) {

  /**
   * The usage of each of {@code blocks}: how many addresses of {@code taken} each holds. An address
   * counts for the block that {@link NodeBlocks#containing contains} it (a sub-claim this node
   * holds of it rather than the slot it lies in), and for no other. A block an ADD has just claimed
   * and not yet reserved its address in is left out until that ADD is done.
   */
  static List<BlockUsage> of(NodeBlocks blocks, Set<AddressKey> taken) {
    Map<BlockRef, Long> counts = new HashMap<>();
    for (AddressKey key : taken) {
      NodeBlocks.Own own = blocks.containing(key);
      if (own != null) {
        counts.merge(own.ref(), 1L, Long::sum);
      }
    }
    List<BlockUsage> usage = new ArrayList<>();
    for (NodeBlocks.Own own : blocks.all()) {
      long count = counts.getOrDefault(own.ref(), 0L);
      if (own.claimInFlight && count == 0) {
        continue; // its ADD has not reserved its address yet: 0 now would mislead
      }
      usage.add(new BlockUsage(own.object, count));
    }
    return usage;
  }
}
