package io.kipam.node.alloc;

/**
 * Why an allocation was refused, in terms the CNI layer maps to an error code: the pool is
 * exhausted, short on this node, the daemon is not ready, or the request is not allowed.
 */
public class AllocationException extends Refusal {

  /** The kinds of refusal, each with the CNI error code it is reported as. */
  public enum Reason {
    /** No address is free in the whole pool, as kipam-operator last counted (code 100). */
    POOL_EXHAUSTED,
    /**
     * No address this node can reach, while the pool still has free ones elsewhere (code 11: a slot
     * is being made reachable, try again).
     */
    POOL_SHORT,
    NOT_READY,
    BLOCK_LIMIT
  }

  private final Reason reason;

  public AllocationException(Reason reason, String message) {
    this(reason, null, message);
  }

  /** A refusal about {@code pool} in particular. */
  public AllocationException(Reason reason, String pool, String message) {
    super(kindOf(reason), message, "", pool, null);
    this.reason = reason;
  }

  private static Kind kindOf(Reason reason) {
    return switch (reason) {
      case POOL_EXHAUSTED, BLOCK_LIMIT -> Kind.EXHAUSTED;
      case POOL_SHORT -> Kind.SHORT;
      case NOT_READY -> Kind.TRY_AGAIN;
    };
  }

  public Reason reason() {
    return reason;
  }
}
