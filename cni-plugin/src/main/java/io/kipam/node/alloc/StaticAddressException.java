package io.kipam.node.alloc;

import java.util.Optional;

/**
 * An ADD asking for a chosen address that kipam cannot give as asked; the message names the address
 * and the reason. Nothing was allocated.
 */
public final class StaticAddressException extends RuntimeException {

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
  private final String pool;
  private final String slot;

  public StaticAddressException(Kind kind, String pool, String message) {
    this(kind, pool, null, message);
  }

  /** With {@code slot}: another node's Exclusive slot that must become Shared first. */
  public StaticAddressException(Kind kind, String pool, String slot, String message) {
    super(message);
    this.kind = kind;
    this.pool = pool;
    this.slot = slot;
  }

  /** The slot of the address that must become Shared before it can be given, if that is why. */
  public Optional<String> slot() {
    return Optional.ofNullable(slot);
  }

  public Kind kind() {
    return kind;
  }

  /** The pool of the address, for the node's demand when its slot must become Shared. */
  public Optional<String> pool() {
    return Optional.ofNullable(pool);
  }
}
