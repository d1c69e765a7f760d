package io.kipam.node.alloc;

/** The API could not be reached or did not answer in time: the caller should try again later. */
public class StoreUnavailableException extends RuntimeException {
  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
