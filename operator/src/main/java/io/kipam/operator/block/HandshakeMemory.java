package io.kipam.operator.block;

import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the operator remembers about blocks between reconciles, by block UID: since when a block has
 * been seen empty, since when its Node has been seen gone, and when it first saw a refusal. Memory
 * only: an operator that restarts (or a new leader) forgets, which only ever delays a release — an
 * idle block waits its full delay again, a refused one its full back-off, a block of a deleted Node
 * its full grace period — and never lets one happen early. Entries of blocks that are gone are
 * dropped by {@link #retainOnly}.
 */
final class HandshakeMemory {

  private record Refusal(String round, Instant seen) {}

  private final Map<String, Instant> idleSince = new ConcurrentHashMap<>();
  private final Map<String, Instant> nodeGoneSince = new ConcurrentHashMap<>();
  private final Map<String, Refusal> refusals = new ConcurrentHashMap<>();
  private final Map<String, String> reported = new ConcurrentHashMap<>();

  /** When the block was first seen empty, recording {@code now} if it was not. */
  Instant idleSince(String uid, Instant now) {
    return idleSince.computeIfAbsent(uid, u -> now);
  }

  void busy(String uid) {
    idleSince.remove(uid);
  }

  /** Starts the idle clock again, e.g. after a refused round, so rounds do not follow too fast. */
  void restartIdle(String uid, Instant now) {
    idleSince.put(uid, now);
  }

  /** When the block's Node was first seen gone, recording {@code now} if it was not. */
  Instant nodeGoneSince(String uid, Instant now) {
    return nodeGoneSince.computeIfAbsent(uid, u -> now);
  }

  /** The block's Node is there (again): a later absence starts a grace period of its own. */
  void nodePresent(String uid) {
    nodeGoneSince.remove(uid);
  }

  /** When the refusal of {@code round} was first seen, recording {@code now} if it was not. */
  Instant refusalSeen(String uid, String round, Instant now) {
    Refusal refusal =
        refusals.compute(
            uid, (u, r) -> r != null && r.round().equals(round) ? r : new Refusal(round, now));
    return refusal.seen();
  }

  /**
   * Whether {@code what} (an Event's reason and round) is news for this block; an Event is written
   * once per block and what, not on every reconcile.
   */
  boolean firstReport(String uid, String what) {
    return !what.equals(reported.put(uid, what));
  }

  void retainOnly(Set<String> uids) {
    idleSince.keySet().retainAll(uids);
    nodeGoneSince.keySet().retainAll(uids);
    refusals.keySet().retainAll(uids);
    reported.keySet().retainAll(uids);
  }
}
