package io.kipam.testing;

/**
 * Tells which chunks of a client's byte stream carry a request, so that "drop after request" cuts a
 * request and not the TLS handshake before it: a drop during the handshake would only show a failed
 * connect, never a write with an unknown outcome.
 *
 * <p>The proxy does not decrypt anything. A TLS stream (one that opens with a handshake record)
 * frames everything in records whose 5-byte headers are plaintext: content type, version, length. A
 * chunk carries a request when it starts an application-data record (type 23). The JDK's TLS 1.3
 * client sends its Finished (which TLS 1.3 encrypts as application data) in the same chunk as its
 * first request, so that chunk counts, as it must. A client that sends its Finished alone may have
 * that chunk picked instead; the connection is then cut at the server's next bytes, the answer to
 * the request that follows or, if the server sends one then, a session ticket. Encrypted alerts
 * (close_notify) count too. For a stream that is not TLS, every chunk counts. Not thread-safe: one
 * instance follows one stream, read by one thread.
 */
final class RequestDetector {

  private static final int HANDSHAKE = 22;
  private static final int APPLICATION_DATA = 23;
  private static final int HEADER_LENGTH = 5;

  private Boolean tls;
  private final byte[] header = new byte[HEADER_LENGTH];
  private int headerFilled;
  private int recordRemaining;

  /** Follows {@code length} more bytes of the stream and says whether they carry a request. */
  boolean carriesRequest(byte[] chunk, int length) {
    if (length <= 0) {
      return false;
    }
    if (tls == null) {
      tls = chunk[0] == HANDSHAKE && (length < 2 || chunk[1] == 3);
    }
    if (!tls) {
      return true;
    }
    boolean applicationData = false;
    int i = 0;
    while (i < length) {
      if (recordRemaining > 0) {
        int skipped = Math.min(recordRemaining, length - i);
        recordRemaining -= skipped;
        i += skipped;
        continue;
      }
      header[headerFilled++] = chunk[i++];
      if (headerFilled == HEADER_LENGTH) {
        applicationData |= (header[0] & 0xff) == APPLICATION_DATA;
        recordRemaining = ((header[3] & 0xff) << 8) | (header[4] & 0xff);
        headerFilled = 0;
      }
    }
    return applicationData;
  }
}
