package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;

/**
 * Which slots of a pool nobody holds: the candidates a claim tries, and how many are left. Only the
 * slots the pool's range touches are candidates, never the whole CIDR: an IPv6 /64 whose range
 * holds 48 addresses has 2^48 slots in its CIDR and 3 in its range. When the range touches few
 * enough slots they are enumerated (excluded runs skipped); otherwise (a large IPv6 range) slots of
 * the range are sampled at random. It holds no state: the {@link Ledger} calls it under its monitor
 * with what it knows to be taken.
 */
final class SlotCandidates {

  /** Ranges touching at most this many slots are enumerated; larger ones are sampled. */
  static final BigInteger ENUMERABLE = BigInteger.valueOf(65536);

  private SlotCandidates() {}

  /**
   * Candidate slots of {@code layout} not {@code taken}, in random order; at most {@code limit}.
   */
  static List<Cidr> unclaimed(PoolLayout layout, Predicate<Cidr> taken, Random random, int limit) {
    List<Cidr> candidates = new ArrayList<>();
    if (enumerable(layout)) {
      for (Cidr block : layout.usableBlocks()) {
        if (!taken.test(block)) {
          candidates.add(block);
        }
      }
      Collections.shuffle(candidates, random);
      return candidates.subList(0, Math.min(limit, candidates.size()));
    }
    BigInteger first = layout.blockIndexOf(layout.range().start());
    BigInteger count = rangeSlots(layout);
    for (int i = 0; i < limit * 4 && candidates.size() < limit; i++) {
      Cidr block =
          layout.block(first.add(new BigInteger(count.bitLength() + 8, random).mod(count)));
      if (!taken.test(block) && layout.hasAssignable(block) && !candidates.contains(block)) {
        candidates.add(block);
      }
    }
    return candidates;
  }

  /**
   * How many usable slots of {@code layout} are not {@code taken}, counted up to {@code cap}; a
   * range too large to enumerate counts as {@code cap}.
   */
  static int unclaimedCount(PoolLayout layout, Predicate<Cidr> taken, int cap) {
    if (!enumerable(layout)) {
      return cap; // too many slots to be short of them
    }
    int n = 0;
    for (Cidr block : layout.usableBlocks()) {
      if (!taken.test(block) && ++n >= cap) {
        break;
      }
    }
    return n;
  }

  /** Whether the slots the pool's range touches are few enough to enumerate. */
  static boolean enumerable(PoolLayout layout) {
    return rangeSlots(layout).compareTo(ENUMERABLE) <= 0;
  }

  /** How many slots the pool's range touches, from the first address's slot to the last's. */
  private static BigInteger rangeSlots(PoolLayout layout) {
    return layout
        .blockIndexOf(layout.range().end())
        .subtract(layout.blockIndexOf(layout.range().start()))
        .add(BigInteger.ONE);
  }
}
