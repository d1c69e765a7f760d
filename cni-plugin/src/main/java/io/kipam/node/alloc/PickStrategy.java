package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Which free address to hand out. In the node's own blocks: the least recently released first
 * (never released counts as longest ago); in Shared slots: one at random, slot by slot in random
 * order. Blocks too large to scan are probed at random. It holds no state: the {@link Ledger} calls
 * it under its monitor, with its own notion of free, and reserves what it returns.
 */
final class PickStrategy {

  /** Blocks with at most this many assignable addresses are scanned for the least recently used. */
  static final BigInteger SCAN_LIMIT = BigInteger.valueOf(4096);

  static final int RANDOM_PROBES = 64;

  private PickStrategy() {}

  /**
   * The free address of {@code blocks} (in that order) released longest ago, stopping at the first
   * one never released (never released counts as longest ago); a block too large to scan yields a
   * random free address of its own at once.
   */
  static Optional<Ledger.Pick> leastRecentlyReleased(
      PoolLayout layout,
      List<Cidr> blocks,
      Predicate<IpAddress> free,
      Function<IpAddress, Instant> releasedAt,
      Random random) {
    Ledger.Pick best = null;
    Instant bestReleased = null;
    for (Cidr block : blocks) {
      if (layout.assignableCount(block).compareTo(SCAN_LIMIT) > 0) {
        Optional<IpAddress> probed = probe(layout, block, free, random);
        if (probed.isPresent()) {
          return Optional.of(new Ledger.Pick(block, probed.get()));
        }
        continue;
      }
      for (IpAddress ip : layout.assignable(block)) {
        if (!free.test(ip)) {
          continue;
        }
        Instant released = releasedAt.apply(ip);
        if (bestReleased == null || released.isBefore(bestReleased)) {
          best = new Ledger.Pick(block, ip);
          bestReleased = released;
        }
        if (released.equals(Instant.EPOCH)) {
          break;
        }
      }
      if (Instant.EPOCH.equals(bestReleased)) {
        break;
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * A free address of one of {@code slots} (shuffled, so nodes spread over them), at random within
   * the first slot that has one; slots outside the pool's CIDR are skipped.
   */
  static Optional<Ledger.Pick> atRandom(
      PoolLayout layout, List<Cidr> slots, Predicate<IpAddress> free, Random random) {
    List<Cidr> order = new ArrayList<>(slots);
    Collections.shuffle(order, random);
    for (Cidr slot : order) {
      if (!layout.cidr().contains(slot)) {
        continue;
      }
      List<IpAddress> candidates = new ArrayList<>();
      if (layout.assignableCount(slot).compareTo(SCAN_LIMIT) > 0) {
        probe(layout, slot, free, random).ifPresent(candidates::add);
      } else {
        for (IpAddress ip : layout.assignable(slot)) {
          if (free.test(ip)) {
            candidates.add(ip);
          }
        }
      }
      if (!candidates.isEmpty()) {
        return Optional.of(
            new Ledger.Pick(slot, candidates.get(random.nextInt(candidates.size()))));
      }
    }
    return Optional.empty();
  }

  /** A free address of {@code block} found by up to {@link #RANDOM_PROBES} random probes. */
  static Optional<IpAddress> probe(
      PoolLayout layout, Cidr block, Predicate<IpAddress> free, Random random) {
    BigInteger count = layout.assignableCount(block);
    for (int i = 0; i < RANDOM_PROBES; i++) {
      BigInteger index = new BigInteger(count.bitLength() + 8, random).mod(count);
      IpAddress ip = layout.assignableAt(block, index);
      if (free.test(ip)) {
        return Optional.of(ip);
      }
    }
    return Optional.empty();
  }
}
