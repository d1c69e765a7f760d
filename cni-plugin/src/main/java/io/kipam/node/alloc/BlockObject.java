package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;

/**
 * What the node's block watch tells of one of this node's IPBlocks: which object it is, its
 * resourceVersion (the precondition of a release answer; null until the watch has shown the block),
 * whether it has a status at all, the release handshake's state ({@code null} when no release is
 * under way) and round, and the {@code status.allocated} it carries.
 */
public record BlockObject(
    BlockRef ref,
    String resourceVersion,
    boolean hasStatus,
    ReleaseState release,
    String requestedAt,
    Long allocated) {

  /** Requested or Ready: the block is on its way out, nothing is allocated from it. */
  public boolean releasing() {
    return release == ReleaseState.Requested || release == ReleaseState.Ready;
  }
}
