package io.kipam.node.alloc;

/**
 * An ADD asking for a chosen address that kipam cannot give as asked; the message names the address
 * and the reason. Nothing was allocated.
 */
public final class StaticAddressException extends Refusal {

  /** What the caller can do about it. */
  public enum Kind {
    /** Passes by itself (the address's slot being made Shared, or released): retry. */
    TRY_AGAIN,
    /** Another attachment holds the address. */
    HELD,
    /** The address cannot be given from the pools the pod may use. */
    INVALID
  }

  private final Kind kind;

  public StaticAddressException(Kind kind, String pool, String message) {
    this(kind, pool, null, message);
  }

  /** With {@code slot}: another node's Exclusive slot that must become Shared first. */
  public StaticAddressException(Kind kind, String pool, String slot, String message) {
    super(refusal(kind, pool), message, "nothing was allocated", pool, slot);
    this.kind = kind;
  }

  /** Try again with a pool is short of it: the node's demand for the pool (or slot) is recorded. */
  private static Refusal.Kind refusal(Kind kind, String pool) {
    return switch (kind) {
      case TRY_AGAIN -> pool == null ? Refusal.Kind.TRY_AGAIN : Refusal.Kind.SHORT;
      case HELD -> Refusal.Kind.ADDRESS_HELD;
      case INVALID -> Refusal.Kind.INVALID_CONFIG;
    };
  }

  /** What the caller can do about the chosen address. */
  public Kind chosenKind() {
    return kind;
  }
}
