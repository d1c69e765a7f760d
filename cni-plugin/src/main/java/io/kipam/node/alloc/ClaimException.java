package io.kipam.node.alloc;

/**
 * An ADD naming an IPAMClaim that kipam cannot serve as asked; the message names the claim and the
 * reason. Nothing was allocated.
 */
public final class ClaimException extends RuntimeException {

  /** What the caller can do about it. */
  public enum Kind {
    /** The state passes by itself (a previous attachment ending, a claim not made yet): retry. */
    TRY_AGAIN,
    /** The claim's address is attached to a live pod elsewhere: one attachment at a time. */
    IN_USE,
    /** The request and the claim do not fit (other network, interface or namespace). */
    INVALID
  }

  private final Kind kind;
  private final Lease holder;

  public ClaimException(Kind kind, String message) {
    this(kind, message, null);
  }

  /** With {@code holder}: the attachment that has the claim's address now. */
  public ClaimException(Kind kind, String message, Lease holder) {
    super(message);
    this.kind = kind;
    this.holder = holder;
  }

  public Kind kind() {
    return kind;
  }

  /** The attachment holding the claim's address (IN_USE), if known. */
  public java.util.Optional<Lease> holder() {
    return java.util.Optional.ofNullable(holder);
  }
}
