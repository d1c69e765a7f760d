package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;

/**
 * What the node's block watch tells of one of this node's IPBlocks: which object it is, its
 * resourceVersion (the precondition of a release answer; null until the watch has shown the block),
 * whether it has a status at all, the release handshake's state ({@code null} when no release is
 * under way) and round, the {@code status.allocated} it carries, and whether it is being deleted
 * (it has a {@code deletionTimestamp}; its finalizer keeps it until it is given back).
 */
public record BlockObject(
    BlockRef ref,
    String resourceVersion,
    boolean hasStatus,
    ReleaseState release,
    String requestedAt,
    Long allocated,
    boolean deleting) {

  public BlockObject(
      BlockRef ref,
      String resourceVersion,
      boolean hasStatus,
      ReleaseState release,
      String requestedAt,
      Long allocated) {
    this(ref, resourceVersion, hasStatus, release, requestedAt, allocated, false);
  }

  /** Requested or Ready: the block is on its way out, nothing is allocated from it. */
  public boolean releasing() {
    return release == ReleaseState.Requested || release == ReleaseState.Ready;
  }

  /**
   * Nothing is allocated from the block: it is being released, or being deleted (for good: a
   * deletion is never undone, whatever its status says later).
   */
  public boolean closed() {
    return releasing() || deleting;
  }
}
