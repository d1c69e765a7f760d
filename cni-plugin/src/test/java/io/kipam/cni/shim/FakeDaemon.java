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

/**
 * A one-shot HTTP peer on a unix socket for the executable's own unit tests: it records the raw
 * request and sends a canned raw answer. The real daemon is exercised by the *IT and *E2E tests.
 */
final class FakeDaemon implements AutoCloseable {

  private final ServerSocketChannel server;
  final CompletableFuture<String> request = new CompletableFuture<>();

  FakeDaemon(Path socket, String rawAnswer) throws IOException {
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    Thread t =
        new Thread(
            () -> {
              try (SocketChannel client = server.accept()) {
                request.complete(readRequest(client));
                client.write(ByteBuffer.wrap(rawAnswer.getBytes(StandardCharsets.UTF_8)));
              } catch (IOException e) {
                request.completeExceptionally(new UncheckedIOException(e));
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
    server.close();
  }
}
