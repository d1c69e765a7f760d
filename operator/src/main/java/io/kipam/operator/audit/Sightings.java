package io.kipam.operator.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The audit's memory of orphans: when each candidate was first seen orphaned, and for which reason.
 * A candidate is due for removal only when a later audit, at least the grace period after the first
 * sighting, sees it orphaned again for the same reason. A candidate an audit no longer sees
 * orphaned (it is gone, or what it names came back) is forgotten, so the memory holds only current
 * candidates and never grows with the number of addresses. Not thread-safe: one audit at a time.
 */
public final class Sightings {

  private record Sighting(OrphanReason reason, Instant first) {}

  private final Duration grace;
  private final Map<AddressObject, Sighting> candidates = new HashMap<>();

  public Sightings(Duration grace) {
    this.grace = grace;
  }

  /**
   * Records that {@code key} was seen orphaned for {@code reason} at {@code now}; true when it had
   * been seen orphaned for the same reason at least the grace period before. A new reason starts
   * the grace period again.
   */
  public boolean seen(AddressObject key, OrphanReason reason, Instant now) {
    Sighting earlier = candidates.get(key);
    if (earlier == null || earlier.reason() != reason) {
      candidates.put(key, new Sighting(reason, now));
      return false;
    }
    return !now.isBefore(earlier.first().plus(grace));
  }

  /** Forgets every candidate not in {@code seenThisAudit}, and those removed. */
  public void retainOnly(Set<AddressObject> seenThisAudit) {
    candidates.keySet().retainAll(seenThisAudit);
  }

  public void forget(AddressObject key) {
    candidates.remove(key);
  }

  public int size() {
    return candidates.size();
  }
}
