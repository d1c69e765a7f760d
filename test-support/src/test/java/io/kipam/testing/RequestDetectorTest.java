package io.kipam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RequestDetectorTest {

  private final RequestDetector detector = new RequestDetector();

  @Test
  void everyChunkOfAPlaintextStreamIsARequest() {
    byte[] get = "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    assertThat(detector.carriesRequest(get, get.length)).isTrue();
    assertThat(detector.carriesRequest(get, get.length)).isTrue();
  }

  @Test
  void tlsHandshakeIsNotARequestButApplicationDataIs() {
    assertThat(carries(record(22, 300))).as("ClientHello").isFalse();
    assertThat(carries(record(22, 70), record(20, 1), record(22, 40)))
        .as("TLS 1.2 key exchange, change-cipher-spec, Finished")
        .isFalse();
    assertThat(carries(record(23, 400))).as("an HTTP request").isTrue();
  }

  @Test
  void tls13FinishedSentWithTheFirstRequestCounts() {
    carries(record(22, 300));

    assertThat(carries(record(20, 1), record(23, 53), record(23, 400))).isTrue();
  }

  @Test
  void recordsSplitAcrossChunksKeepTheFraming() {
    carries(record(22, 300));
    byte[] twoRecords = concat(record(23, 100), record(23, 50));

    // Split inside the second record's header: the first part starts a request.
    assertThat(detector.carriesRequest(twoRecords, 107)).isTrue();
    byte[] rest = Arrays.copyOfRange(twoRecords, 107, twoRecords.length);
    // The rest completes that header: a new application-data record starts here.
    assertThat(detector.carriesRequest(rest, rest.length)).isTrue();
    // The middle of a record starts nothing.
    byte[] big = record(23, 1000);
    assertThat(detector.carriesRequest(big, 10)).isTrue();
    byte[] middle = Arrays.copyOfRange(big, 10, 500);
    assertThat(detector.carriesRequest(middle, middle.length)).isFalse();
  }

  private boolean carries(byte[]... records) {
    byte[] chunk = concat(records);
    return detector.carriesRequest(chunk, chunk.length);
  }

  /** A TLS record of {@code type} with a body of {@code length} bytes (contents do not matter). */
  private static byte[] record(int type, int length) {
    byte[] r = new byte[5 + length];
    r[0] = (byte) type;
    r[1] = 3;
    r[2] = 3;
    r[3] = (byte) (length >> 8);
    r[4] = (byte) length;
    Arrays.fill(r, 5, r.length, (byte) 22);
    return r;
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }
}
