package io.kipam.node.kube;

/**
 * Decides what kipam-node does about one of its IPAddress objects, from what its own watches show
 * (design §5b): an address is free only when its holder is gone and its attachment is over. Pure;
 * {@link AttachmentKeeper} gathers the facts and acts.
 *
 * <p>The attachment is over when kipam handled its CNI DEL (or GC: the allocator ends those
 * itself), or its pod is gone from the API (deleted, not merely Terminating), or its pod has
 * finished (phase Succeeded or Failed: a finished pod holds nothing). A static pod's address is
 * held by its Node: its mirror Pod comes and goes while the sandbox runs, so only a DEL or GC ends
 * it.
 *
 * <p>This is also the node's own audit (design §6): an address whose pod the node's pod watch has
 * not shown for a while, and a fresh read finds gone, is released like a finished pod's, whether or
 * not the garbage collector would also come for it (an object written without an owner, or naming a
 * pod UID that never existed). kipam-operator does not read Pods for addresses of a node that has a
 * Node object.
 */
public final class AttachmentRules {

  /** What the node's pod watch shows of the pod an address's attachment is for (name and UID). */
  public enum PodState {
    /** Exists and has not finished. */
    LIVE,
    /** Exists with a deletionTimestamp (Terminating), not finished. */
    TERMINATING,
    /** Exists in phase Succeeded or Failed. */
    FINISHED,
    /** Not in the watch under that name and UID (to be confirmed by a fresh read). */
    ABSENT
  }

  /**
   * The facts of one IPAddress object; {@code settled}: it is older than the orphan grace ({@code
   * KIPAM_ORPHAN_GRACE_SECONDS}), so a pod missing from the watch is not merely one the watch has
   * not shown yet.
   */
  public record Facts(
      boolean deleting, boolean finalized, boolean nodeHeld, PodState pod, boolean settled) {}

  /** What to do. */
  public enum Action {
    /** Nothing: the address is in use, or the object goes by itself (no finalizer of ours). */
    NOTHING,
    /** An object from before kipam.io/attachment: give it the finalizer (and its holder). */
    ADOPT,
    /** The pod has finished: release the address (delete and remove the finalizer). */
    RELEASE_FINISHED,
    /** Deleted, and its pod has finished: remove the finalizer. */
    END,
    /**
     * Not deleted, and the watch has not shown its pod for the grace: read the pod afresh, release
     * the address (delete and remove the finalizer) if it is gone.
     */
    RELEASE_IF_POD_GONE,
    /** Deleted, and the watch no longer shows its pod: read the pod afresh, end if it is gone. */
    END_IF_POD_GONE,
    /** Deleted while its attachment lives: the object stays Terminating, and says why. */
    KEEP
  }

  private AttachmentRules() {}

  public static Action decide(Facts facts) {
    boolean podFinished = !facts.nodeHeld() && facts.pod() == PodState.FINISHED;
    if (!facts.deleting()) {
      if (!facts.finalized()) {
        return Action.ADOPT;
      }
      if (podFinished) {
        return Action.RELEASE_FINISHED;
      }
      return !facts.nodeHeld() && facts.settled() && facts.pod() == PodState.ABSENT
          ? Action.RELEASE_IF_POD_GONE
          : Action.NOTHING;
    }
    if (!facts.finalized()) {
      return Action.NOTHING;
    }
    if (facts.nodeHeld()) {
      return Action.KEEP;
    }
    if (podFinished) {
      return Action.END;
    }
    return facts.pod() == PodState.ABSENT ? Action.END_IF_POD_GONE : Action.KEEP;
  }
}
