package io.kipam.cni.shim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

/**
 * A one-shot HTTP peer on a unix socket for the executable's own unit tests: it records the raw
 * request and sends a canned raw answer, or, made by {@link #thatNeverAnswers}, keeps the
 * connection open without a word until it is closed. The real daemon is exercised by the *IT and
 * *E2E tests.
 */
final class FakeDaemon implements AutoCloseable {

  private final ServerSocketChannel server;
  private final CountDownLatch closed = new CountDownLatch(1);
  final CompletableFuture<String> request = new CompletableFuture<>();

  /** A daemon that accepts one call, reads it, and never answers. */
  static FakeDaemon thatNeverAnswers(Path socket) throws IOException {
    return new FakeDaemon(socket, null);
  }

  FakeDaemon(Path socket, String rawAnswer) throws IOException {
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    Thread t =
        new Thread(
            () -> {
              try (SocketChannel client = server.accept()) {
                request.complete(readRequest(client));
                if (rawAnswer == null) {
                  closed.await();
                } else {
                  client.write(ByteBuffer.wrap(rawAnswer.getBytes(StandardCharsets.UTF_8)));
                }
              } catch (IOException e) {
                request.completeExceptionally(new UncheckedIOException(e));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    t.setDaemon(true);
    t.start();
  }

  private static String readRequest(SocketChannel client) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(1 << 21);
    while (true) {
      if (client.read(buffer) < 0) {
        break;
      }
      String sofar = new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
      int headEnd = sofar.indexOf("\r\n\r\n");
      if (headEnd >= 0) {
        int length =
            Integer.parseInt(
                sofar
                    .lines()
                    .filter(l -> l.toLowerCase().startsWith("content-length:"))
                    .findFirst()
                    .orElseThrow()
                    .substring("content-length:".length())
                    .trim());
        if (buffer.position() >= headEnd + 4 + length) {
          return sofar;
        }
      }
    }
    return new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws IOException {
    closed.countDown();
    server.close();
  }
}
