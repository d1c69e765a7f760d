package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;

/**
 * The writes the node daemon makes to its blocks' status, each touching only its own fields so it
 * never overwrites what kipam-operator writes: {@code status.allocated}, and the daemon's answers
 * in the release handshake ({@code status.release}). Failures are reported as for {@link
 * AllocationStore}.
 */
public interface BlockStatusStore {

  /**
   * Sets {@code status.allocated} of the block {@code seen}, and nothing else. Returns false when
   * the block is not that object any more: gone, another object of its name (its UID differs), or,
   * when it had no status, changed since (it may have one now).
   */
  boolean writeAllocated(BlockObject seen, long allocated);

  /**
   * Writes {@code answer} into {@code status.release} of the block {@code ref} if it is still at
   * {@code resourceVersion}. Returns the block's new resourceVersion, or null when the block has
   * changed since (409) or is gone: then the answer is decided again on what the block is now.
   */
  String answerRelease(BlockRef ref, String resourceVersion, ReleaseAnswer answer);

  /**
   * Writes {@code status.mode: Shared} into the slot {@code ref}, the holder's answer to
   * kipam-operator's request to convert it, if the slot is still that object (its UID) and still
   * carries the request of the round {@code shareRequestedAt}. Returns false when it is not (gone,
   * another object, the request withdrawn or replaced); then nothing was written.
   */
  boolean writeShared(BlockRef ref, String shareRequestedAt);

  /**
   * Asks for this node's own slot {@code ref} to become Shared, as kipam-operator asks for a slot:
   * writes {@code status.share} ({@code requestedAt}, {@code reason}) if the slot is still that
   * object (its UID) and carries no request yet. The node's {@link SlotConverter} then converts it
   * like any requested slot. Returns false when nothing was written.
   */
  boolean requestShare(BlockRef ref, String requestedAt, String reason);

  /**
   * The daemon's answer to one release request: {@code Ready} or {@code Refused}, for the round
   * {@code requestedAt} (kept as the operator wrote it), when ({@code respondedAt}, RFC 3339), and
   * why a refusal ({@code reason}; null for Ready).
   */
  record ReleaseAnswer(ReleaseState state, String requestedAt, String respondedAt, String reason) {}
}
