package io.kipam.node.alloc;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * When each address was last released, for the reuse delay and for "least recently released first",
 * and each pool's reuse delay as the pool watch (or an allocation) last showed it: an address rests
 * after its release until its pool's reuse delay has passed. Bounded: an entry older than the
 * longest reuse delay in use tells nothing a missing entry does not ("released long ago"), so such
 * entries are dropped as releases come in. Not thread-safe; the {@link Ledger} calls it under its
 * monitor.
 */
final class RestingAddresses {

  /** Prune at most once per this many releases, so a release stays O(1) amortised. */
  private static final int PRUNE_EVERY = 1024;

  private final Map<AddressKey, Instant> releasedAt = new HashMap<>();

  /** The IPAMClaim ({@code namespace/name}) an address was released from, when it was a claim's. */
  private final Map<AddressKey, String> releasedBy = new HashMap<>();

  private final Map<String, Duration> reuseDelays = new HashMap<>();
  private Duration longestDelay = Duration.ZERO;
  private boolean delayKnown;
  private int sincePrune;

  void rest(AddressKey address, Instant at) {
    rest(address, at, null);
  }

  /**
   * @param claim the IPAMClaim ({@code namespace/name}) whose address it was, which may attach it
   *     again at once: its holder does not change (null: the address was a pod's)
   */
  void rest(AddressKey address, Instant at, String claim) {
    releasedAt.merge(address, at, (a, b) -> a.isAfter(b) ? a : b);
    if (claim == null) {
      releasedBy.remove(address);
    } else {
      releasedBy.put(address, claim);
    }
    if (++sincePrune >= PRUNE_EVERY) {
      prune(at);
    }
  }

  /**
   * A pool's reuse delay, from the pool watch or the pool an allocation reads: a host-prefix block
   * goes back only once its address has rested that long.
   */
  void poolSeen(String pool, Duration reuseDelay) {
    reuseDelays.put(pool, reuseDelay);
    noteDelay(reuseDelay);
  }

  /** The pool is gone: its addresses rest as long as any remembered release may (see below). */
  void poolGone(String pool) {
    reuseDelays.remove(pool);
  }

  /**
   * Whether an address still rests at {@code now} after its release. For a pool whose reuse delay
   * is not known yet, any remembered release may still be resting.
   */
  Predicate<AddressKey> restingAt(Instant now) {
    return address -> {
      Duration delay = reuseDelays.get(address.pool());
      return delay == null
          ? !releasedAt(address).equals(Instant.EPOCH)
          : resting(address, delay, now);
    };
  }

  /** Every remembered address that still rests at {@code now}, as {@link #restingAt} tells. */
  Set<AddressKey> allRestingAt(Instant now) {
    Predicate<AddressKey> restingNow = restingAt(now);
    Set<AddressKey> rest = new HashSet<>();
    for (AddressKey address : remembered()) {
      if (restingNow.test(address)) {
        rest.add(address);
      }
    }
    return rest;
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

  /** The IPAMClaim whose address was last released, if it was a claim's. */
  String releasedBy(AddressKey address) {
    return releasedBy.get(address);
  }

  void prune(Instant now) {
    sincePrune = 0;
    if (!delayKnown) {
      return; // no pool seen yet: every entry may still matter
    }
    Instant horizon = now.minus(longestDelay);
    releasedAt.values().removeIf(at -> at.isBefore(horizon));
    releasedBy.keySet().retainAll(releasedAt.keySet());
  }

  int size() {
    return releasedAt.size();
  }
}
