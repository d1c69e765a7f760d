package io.kipam.node.alloc;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * When each address was last released, for the reuse delay and for "least recently released first".
 * Bounded: an entry older than the longest reuse delay in use tells nothing a missing entry does
 * not ("released long ago"), so such entries are dropped as releases come in. Not thread-safe; the
 * {@link Ledger} calls it under its monitor.
 */
final class RestingAddresses {

  /** Prune at most once per this many releases, so a release stays O(1) amortised. */
  private static final int PRUNE_EVERY = 1024;

  private final Map<AddressKey, Instant> releasedAt = new HashMap<>();
  private Duration longestDelay = Duration.ZERO;
  private boolean delayKnown;
  private int sincePrune;

  void rest(AddressKey address, Instant at) {
    releasedAt.merge(address, at, (a, b) -> a.isAfter(b) ? a : b);
    if (++sincePrune >= PRUNE_EVERY) {
      prune(at);
    }
  }

  /** Notes a pool's reuse delay, so entries are kept as long as some pool needs them. */
  void noteDelay(Duration delay) {
    delayKnown = true;
    if (delay.compareTo(longestDelay) > 0) {
      longestDelay = delay;
    }
  }

  /** When {@code address} was last released; {@link Instant#EPOCH} for never (or long ago). */
  Instant releasedAt(AddressKey address) {
    return releasedAt.getOrDefault(address, Instant.EPOCH);
  }

  /** Every address with a remembered release, resting or not. */
  Set<AddressKey> remembered() {
    return releasedAt.keySet();
  }

  boolean resting(AddressKey address, Duration delay, Instant now) {
    Instant released = releasedAt.get(address);
    return released != null && released.plus(delay).isAfter(now);
  }

  void prune(Instant now) {
    sincePrune = 0;
    if (!delayKnown) {
      return; // no pool seen yet: every entry may still matter
    }
    Instant horizon = now.minus(longestDelay);
    releasedAt.values().removeIf(at -> at.isBefore(horizon));
  }

  int size() {
    return releasedAt.size();
  }
}
