package io.kipam.node.alloc;

/**
 * A write whose outcome is unknown: the request may have reached the API server and succeeded
 * although the answer was lost (a timeout, a connection reset after the request was sent, a 5xx).
 * Whatever it wrote must be treated as taken until a fresh read settles it.
 */
public class WriteOutcomeUnknownException extends StoreUnavailableException {
  public WriteOutcomeUnknownException(String message, Throwable cause) {
    super(message, cause);
  }
}
