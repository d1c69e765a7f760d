package io.kipam.node.alloc;

/**
 * The API server refused a write because of what the caller asked for (400, 404, 422) or who asked
 * (403: kipam-node's role or the admission policy): retrying the same request cannot help. {@code
 * status} is the HTTP status; the message carries the API server's reason.
 */
public class RequestRejectedException extends RuntimeException {

  private final int status;

  public RequestRejectedException(int status, String message) {
    super(message);
    this.status = status;
  }

  public int status() {
    return status;
  }
}
