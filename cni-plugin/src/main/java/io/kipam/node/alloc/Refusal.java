package io.kipam.node.alloc;

import java.util.Optional;

/**
 * Why an ADD gets no address, as a value: what kind of refusal it is, a message that names what is
 * wrong, details on what to do, and — when the refusal means this node is short of a pool's
 * addresses — the pool (and the slot) kipam-operator should make reachable. Nothing was allocated.
 * Which CNI error code each kind is answered with is decided in one place, {@code
 * io.kipam.node.CniCodes}.
 */
public class Refusal extends RuntimeException {

  /** The kinds of refusal: what the caller can do about it. */
  public enum Kind {
    /** The state passes by itself (a watch reconnecting, a slot being made Shared): retry. */
    TRY_AGAIN,
    /** Free addresses exist that this node cannot reach yet; its demand is recorded: retry. */
    SHORT,
    /** No address is free for the attachment in any pool it may use. */
    EXHAUSTED,
    /** A pool does not exist, is not Ready, or its selectors keep it from the pod or node. */
    POOL_NOT_AVAILABLE,
    /** The request (network configuration, annotations, claim) cannot be served as written. */
    INVALID_CONFIG,
    /** The runtime's environment (CNI_ARGS) is wrong. */
    INVALID_ENVIRONMENT,
    /** The chosen address is held by another attachment. */
    ADDRESS_HELD,
    /** The claim's address is attached to a running pod. */
    CLAIM_IN_USE
  }

  private final Kind kind;
  private final String details;
  private final String pool;
  private final String slot;

  public Refusal(Kind kind, String message) {
    this(kind, message, "", null, null);
  }

  public Refusal(Kind kind, String message, String details) {
    this(kind, message, details, null, null);
  }

  /**
   * @param pool the pool the refusal is about (null: none in particular)
   * @param slot the slot of {@code pool} that must become Shared first (null: none)
   */
  public Refusal(Kind kind, String message, String details, String pool, String slot) {
    super(message);
    this.kind = kind;
    this.details = details == null ? "" : details;
    this.pool = pool;
    this.slot = slot;
  }

  public Kind kind() {
    return kind;
  }

  /**
   * What the caller can do, for the CNI error's {@code details}; empty when the message says it.
   */
  public String details() {
    return details;
  }

  /** The pool the refusal is about, when it is about one. */
  public Optional<String> pool() {
    return Optional.ofNullable(pool);
  }

  /** The slot of the address that must become Shared before it can be given, if that is why. */
  public Optional<String> slot() {
    return Optional.ofNullable(slot);
  }
}
