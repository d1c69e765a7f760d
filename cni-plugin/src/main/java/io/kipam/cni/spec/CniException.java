package io.kipam.cni.spec;

import java.util.Objects;
import java.util.Optional;

/**
 * A failed CNI call as the runtime will see it: an {@link CniErrorCode}, a short {@code msg} and
 * longer {@code details} saying what to fix. Rendered by {@link CniResponse#error} as the
 * specification's error JSON, so every layer of kipam can throw one and the outermost layer turns
 * it into stdout and exit code 1 without knowing where it came from.
 *
 * <p>Messages may quote the offending value, never the configuration as a whole: stdin can carry
 * credentials. The exception may carry the cniVersion the caller spoke (known once the
 * configuration has been read), so the answer is in the caller's version even when the failure
 * happened while parsing.
 */
public final class CniException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final CniErrorCode code;
  private final String msg;
  private final String details;
  private final transient CniVersion callerVersion;

  public CniException(CniErrorCode code, String msg, String details) {
    this(code, msg, details, null, null);
  }

  public CniException(CniErrorCode code, String msg, String details, Throwable cause) {
    this(code, msg, details, null, cause);
  }

  private CniException(
      CniErrorCode code, String msg, String details, CniVersion callerVersion, Throwable cause) {
    super(
        code.code() + ": " + msg + (details == null || details.isEmpty() ? "" : ": " + details),
        cause);
    this.code = Objects.requireNonNull(code, "code");
    this.msg = Objects.requireNonNull(msg, "msg");
    this.details = details == null ? "" : details;
    this.callerVersion = callerVersion;
  }

  public CniErrorCode code() {
    return code;
  }

  /** The short message, the spec's {@code msg}. */
  public String msg() {
    return msg;
  }

  /** The long message, the spec's {@code details}; empty when there is nothing to add. */
  public String details() {
    return details;
  }

  /** The cniVersion to answer in, when the failure happened after it was known. */
  public Optional<CniVersion> callerVersion() {
    return Optional.ofNullable(callerVersion);
  }

  /** The same error, to be answered in {@code version}. */
  public CniException answeredIn(CniVersion version) {
    if (version == null || version == callerVersion) {
      return this;
    }
    return new CniException(code, msg, details, version, this);
  }
}
