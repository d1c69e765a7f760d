package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;

/**
 * What the node's block watch tells of one of this node's IPBlocks: which object it is, its
 * resourceVersion (the precondition of a release answer; null until the watch has shown the block),
 * whether it has a status at all, the release handshake's state ({@code null} when no release is
 * under way) and round, the {@code status.allocated} it carries, and whether it is being deleted
 * (it has a {@code deletionTimestamp}; its finalizer keeps it until it is given back), whether its
 * {@code status.mode} is Shared, and the round of kipam-operator's request to make it Shared
 * ({@code status.share.requestedAt}; null when none).
 */
public record BlockObject(
    BlockRef ref,
    String resourceVersion,
    boolean hasStatus,
    ReleaseState release,
    String requestedAt,
    Long allocated,
    boolean deleting,
    boolean shared,
    String shareRequestedAt) {

  public BlockObject(
      BlockRef ref,
      String resourceVersion,
      boolean hasStatus,
      ReleaseState release,
      String requestedAt,
      Long allocated,
      boolean deleting) {
    this(ref, resourceVersion, hasStatus, release, requestedAt, allocated, deleting, false, null);
  }

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

  /** kipam-operator asked for the slot to become Shared and it is not yet. */
  public boolean converting() {
    return shareRequestedAt != null && !shared && !deleting && !ref.hostPrefix();
  }

  /**
   * Nothing is allocated from the block from memory: it is being released, being deleted (for good:
   * a deletion is never undone, whatever its status says later), Shared (its addresses are
   * sub-claimed one by one, by any node) or asked to become Shared (from the moment the request is
   * seen, so that the set of addresses the conversion sub-claims can only shrink).
   */
  public boolean closed() {
    return releasing() || deleting || shared || shareRequestedAt != null;
  }
}
