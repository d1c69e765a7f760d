package io.kipam.node.alloc;

/**
 * The API could not be reached or did not answer in time, and the write did not happen: the caller
 * should try again later. A write that may have happened is a {@link WriteOutcomeUnknownException}.
 */
public class StoreUnavailableException extends RuntimeException {
  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
