package io.kipam.cni.spec;

/**
 * Every error code kipam puts in a CNI error answer, in one place. Codes below 100 are the CNI
 * specification's well-known codes and keep exactly the meaning the specification gives them; codes
 * of 100 and above are kipam's own, as the specification reserves that range for plugins.
 *
 * <p>A runtime decides what to do from the code alone (11 means "retry", 3 means "nothing to clean
 * up"), so a code is never reused for a second meaning and the table only grows.
 */
public enum CniErrorCode {
  /** The configuration's cniVersion is not one kipam speaks, or does not allow the command. */
  INCOMPATIBLE_VERSION(1),
  /** A field kipam does not support appears where kipam owns the schema (inside {@code ipam}). */
  UNSUPPORTED_FIELD(2),
  /** The container is unknown or gone; the runtime need not clean anything up for it. */
  UNKNOWN_CONTAINER(3),
  /** A CNI_* environment variable is missing or malformed; the message names every such one. */
  INVALID_ENVIRONMENT(4),
  /** Reading the configuration or talking to kipam-node failed below the CNI level. */
  IO_FAILURE(5),
  /** The configuration (or another input) is not decodable, e.g. not JSON. */
  DECODING_FAILURE(6),
  /** The configuration decodes but is not valid; the message names the JSON path. */
  INVALID_NETWORK_CONFIG(7),
  /** A transient condition (API server unreachable, daemon not synced yet); retry later. */
  TRY_AGAIN_LATER(11),
  /** STATUS only: kipam cannot serve ADD now. */
  PLUGIN_NOT_AVAILABLE(50),
  /** STATUS only: kipam cannot serve ADD, and existing containers may have limited connectivity. */
  PLUGIN_NOT_AVAILABLE_LIMITED_CONNECTIVITY(51),
  /** kipam: no free address is left in the pool(s) this node may allocate from. */
  POOL_EXHAUSTED(100),
  /** kipam: a pool named in {@code ipam.pools} does not exist or is not Ready for allocation. */
  POOL_NOT_AVAILABLE(101),
  /** kipam: CHECK found that the attachment's address no longer matches its prevResult. */
  CHECK_MISMATCH(102),
  /**
   * kipam: the address of the IPAMClaim the pod names is attached to another pod that is still
   * running: one attachment at a time (live migration is not supported).
   */
  CLAIM_IN_USE(103),
  /** kipam: the chosen address (a static address) is held by another pod; the message names it. */
  ADDRESS_HELD(104),
  /**
   * A bug in kipam; the details say where to look, and a retry is unlikely to help. 999 is the code
   * the reference library (libcni's skel) gives errors it cannot classify, so tools that know that
   * convention read kipam's the same way.
   */
  INTERNAL(999);

  private final int code;

  CniErrorCode(int code) {
    this.code = code;
  }

  /** The number written to the {@code code} field of the error JSON. */
  public int code() {
    return code;
  }

  /** True for the codes the CNI specification defines (below 100). */
  public boolean wellKnown() {
    return code < 100;
  }
}
