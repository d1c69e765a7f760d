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
 * Which slots of a pool nobody holds: the candidates a claim tries, and how many are left. A pool
 * with few enough slots is enumerated; one with more (IPv6) is sampled at random. It holds no
 * state: the {@link Ledger} calls it under its monitor with what it knows to be taken.
 */
final class SlotCandidates {

  /** Pools with at most this many slots are enumerated; larger ones are sampled. */
  static final BigInteger ENUMERABLE = BigInteger.valueOf(65536);

  private SlotCandidates() {}

  /**
   * Candidate slots of {@code layout} not {@code taken}, in random order; at most {@code limit}.
   */
  static List<Cidr> unclaimed(PoolLayout layout, Predicate<Cidr> taken, Random random, int limit) {
    List<Cidr> candidates = new ArrayList<>();
    if (layout.blockCount().compareTo(ENUMERABLE) <= 0) {
      for (Cidr block : layout.usableBlocks()) {
        if (!taken.test(block)) {
          candidates.add(block);
        }
      }
      Collections.shuffle(candidates, random);
      return candidates.subList(0, Math.min(limit, candidates.size()));
    }
    BigInteger count = layout.blockCount();
    for (int i = 0; i < limit * 4 && candidates.size() < limit; i++) {
      Cidr block = layout.block(new BigInteger(count.bitLength() + 8, random).mod(count));
      if (!taken.test(block) && layout.hasAssignable(block) && !candidates.contains(block)) {
        candidates.add(block);
      }
    }
    return candidates;
  }

  /**
   * How many usable slots of {@code layout} are not {@code taken}, counted up to {@code cap}; a
   * pool too large to enumerate counts as {@code cap}.
   */
  static int unclaimedCount(PoolLayout layout, Predicate<Cidr> taken, int cap) {
    if (layout.blockCount().compareTo(ENUMERABLE) > 0) {
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
}
