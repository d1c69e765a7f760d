package io.kipam.node;

import io.kipam.cni.spec.CniErrorCode;
import io.kipam.cni.spec.CniException;
import io.kipam.node.alloc.ClaimException;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Refusal;
import io.kipam.node.alloc.RequestRejectedException;
import io.kipam.node.alloc.StoreUnavailableException;
import io.kipam.node.alloc.WriteOutcomeUnknownException;
import io.kipam.node.kube.NodeWatch;
import java.util.function.Predicate;

/**
 * The one place that chooses the CNI error code of every failure of kipam-node's verbs (docs/cni.md
 * lists them; errors in the call itself — environment, JSON, version — are the dispatcher's): a
 * daemon not synced, a watch stopped 11, a daemon not ready for STATUS 50, a CHECK mismatch 102; a
 * {@link Refusal} by its kind — try again and short 11, exhausted 100, a pool not available 101, an
 * invalid request 7, a bad environment 4, a chosen address held 104, a claim in use 103 —; a
 * transient API failure, a write of unknown outcome or a pod this node does not know yet 11; a
 * request the API refuses 7 (4 when the pod's namespace is gone) with the API server's reason. A
 * claim whose address is attached to a pod that is gone, finished or being deleted is 11: that
 * attachment is ending.
 */
final class CniCodes {

  private final String node;
  private final Predicate<Lease> attachedToLivePod;

  /**
   * @param node this node, for messages
   * @param attachedToLivePod whether the pod of a lease runs (not gone, finished or deleted)
   */
  CniCodes(String node, Predicate<Lease> attachedToLivePod) {
    this.node = node;
    this.attachedToLivePod = attachedToLivePod;
  }

  /** The code each kind of refusal is answered with. */
  static CniErrorCode of(Refusal.Kind kind) {
    return switch (kind) {
      case TRY_AGAIN, SHORT -> CniErrorCode.TRY_AGAIN_LATER;
      case EXHAUSTED -> CniErrorCode.POOL_EXHAUSTED;
      case POOL_NOT_AVAILABLE -> CniErrorCode.POOL_NOT_AVAILABLE;
      case INVALID_CONFIG -> CniErrorCode.INVALID_NETWORK_CONFIG;
      case INVALID_ENVIRONMENT -> CniErrorCode.INVALID_ENVIRONMENT;
      case ADDRESS_HELD -> CniErrorCode.ADDRESS_HELD;
      case CLAIM_IN_USE -> CniErrorCode.CLAIM_IN_USE;
    };
  }

  /** Any verb before the daemon has read its allocations: nothing is looked up, try again. */
  CniException notSynced() {
    return new CniException(
        CniErrorCode.TRY_AGAIN_LATER,
        "kipam-node on " + node + " is still reading its allocations; try again",
        "");
  }

  /** ADD or GC while a watch of the daemon has stopped for good. */
  CniException watchStopped() {
    return new CniException(
        CniErrorCode.TRY_AGAIN_LATER,
        "the Kubernetes API is unavailable: a watch of kipam-node on "
            + node
            + " has stopped; try"
            + " again",
        "");
  }

  /** STATUS of a daemon that is not ready. */
  CniException notReady() {
    return new CniException(
        CniErrorCode.PLUGIN_NOT_AVAILABLE,
        "kipam-node on " + node + " is not ready",
        "it has not finished reading its allocations, or a watch of the API is reconnecting");
  }

  /** CHECK found the attachment's addresses are not what they should be. */
  static CniException checkMismatch(String message, String details) {
    return new CniException(CniErrorCode.CHECK_MISMATCH, message, details);
  }

  /** {@code failure} as the CNI error the runtime acts on. */
  CniException translate(Exception failure) {
    if (failure instanceof CniException e) {
      return e;
    }
    if (failure instanceof Refusal e) {
      return new CniException(of(e.kind()), e.getMessage(), e.details());
    }
    if (failure instanceof ClaimException e) {
      return claim(e);
    }
    if (failure instanceof WriteOutcomeUnknownException e) {
      return new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          "the Kubernetes API did not answer whether the address was written; it stays reserved"
              + " until kipam-node has checked, try again",
          e.getMessage());
    }
    if (failure instanceof StoreUnavailableException e) {
      return new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          "the Kubernetes API is unavailable; nothing was changed, try again",
          e.getMessage());
    }
    if (failure instanceof RequestRejectedException e) {
      return rejected(e);
    }
    if (failure instanceof NodeWatch.PoolNotUsableException e) {
      return new CniException(CniErrorCode.POOL_NOT_AVAILABLE, e.getMessage(), "");
    }
    if (failure instanceof NodeWatch.PodNotOnNodeException e) {
      return new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          e.getMessage() + " on node " + node + "; nothing was allocated",
          "an address is owned by its Pod object, so kipam-node allocates only for a Pod bound to"
              + " this node with the runtime's K8S_POD_UID (or its mirror Pod); try again once the"
              + " Pod exists");
    }
    if (failure instanceof RuntimeException e) {
      throw e; // a bug: the dispatcher reports it as an internal error
    }
    throw new IllegalStateException(failure);
  }

  /** 404 on a create in a namespace: the pod's namespace (from K8S_POD_NAMESPACE) is gone. */
  private CniException rejected(RequestRejectedException e) {
    CniErrorCode code =
        e.status() == 404 ? CniErrorCode.INVALID_ENVIRONMENT : CniErrorCode.INVALID_NETWORK_CONFIG;
    String details =
        e.status() == 403
            ? "kipam-node on "
                + node
                + " may not make this write: check the role of its service account"
                + " (config/rbac) and that NODE_NAME is the Node its token is bound to"
                + " (config/admission); nothing was allocated"
            : "nothing was allocated";
    return new CniException(code, e.getMessage(), details);
  }

  /**
   * An IPAMClaim that cannot be attached as asked. Its address attached to another pod is "try
   * again" while that pod is gone, finished or being deleted (its attachment is ending), and {@link
   * CniErrorCode#CLAIM_IN_USE} while it runs.
   */
  private CniException claim(ClaimException e) {
    return switch (e.kind()) {
      case TRY_AGAIN -> new CniException(CniErrorCode.TRY_AGAIN_LATER, e.getMessage(), "");
      case INVALID ->
          new CniException(
              CniErrorCode.INVALID_NETWORK_CONFIG, e.getMessage() + "; nothing was allocated", "");
      case IN_USE ->
          attachedToLivePod.test(e.holder().orElseThrow())
              ? new CniException(
                  CniErrorCode.CLAIM_IN_USE,
                  e.getMessage()
                      + ", which is running: an IPAMClaim's address is attached to one pod at a"
                      + " time (live migration is not supported); nothing was allocated",
                  "")
              : new CniException(
                  CniErrorCode.TRY_AGAIN_LATER,
                  e.getMessage()
                      + ", whose attachment is ending (the pod is gone, finished or being"
                      + " deleted); nothing was allocated, try again",
                  "");
    };
  }
}
