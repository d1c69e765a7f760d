package io.kipam.node.server;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.thread.Invocable;

/**
 * Reads one request body into memory without holding a thread while the client is slow: it takes
 * what has arrived, asks Jetty to call back when more does, and gives up as soon as the body would
 * grow past its cap, however the body is framed (a Content-Length, or chunks of unknown total). A
 * client that sends part of a body and stops so costs a connection until the idle timeout, not a
 * thread, and a huge body costs at most the cap in memory. Every read ends in exactly one call to
 * its {@link Outcome}, possibly on a selector thread, so an outcome must not block.
 */
final class BoundedBody implements Runnable {

  /** What became of a body. */
  interface Outcome {
    void complete(byte[] body);

    /** The body is larger than the cap; what arrived so far is dropped, the rest is not read. */
    void tooLarge();

    /** Reading failed, e.g. with a {@link java.util.concurrent.TimeoutException} when idle. */
    void failed(Throwable failure);
  }

  private final Request request;
  private final int maxBytes;
  private final Outcome outcome;
  private final ByteArrayOutputStream body;
  private final Runnable onContent;

  private BoundedBody(Request request, int maxBytes, Outcome outcome) {
    this.request = request;
    this.maxBytes = maxBytes;
    this.outcome = outcome;
    long length = request.getLength();
    this.body = new ByteArrayOutputStream(length >= 0 && length <= maxBytes ? (int) length : 8192);
    // Reading what has arrived never blocks, so Jetty may call back on whichever thread it likes.
    this.onContent = Invocable.from(Invocable.InvocationType.NON_BLOCKING, this);
  }

  /** Starts reading the body of {@code request}; {@code outcome} hears how it ended. */
  static void read(Request request, int maxBytes, Outcome outcome) {
    new BoundedBody(request, maxBytes, outcome).run();
  }

  @Override
  public void run() {
    while (true) {
      Content.Chunk chunk = request.read();
      if (chunk == null) {
        request.demand(onContent);
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        outcome.failed(chunk.getFailure());
        return;
      }
      boolean last = chunk.isLast();
      try {
        ByteBuffer bytes = chunk.getByteBuffer();
        if (bytes.remaining() > maxBytes - body.size()) {
          outcome.tooLarge();
          return;
        }
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(copy);
        body.writeBytes(copy);
      } finally {
        chunk.release();
      }
      if (last) {
        outcome.complete(body.toByteArray());
        return;
      }
    }
  }
}
