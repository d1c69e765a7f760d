package io.kipam.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A server on a free port of 127.0.0.1 for {@link FaultProxyTest}, a thread per connection: either
 * an echo server, or a line server that records each request line and answers {@code "re: <line>"},
 * so a test can see what reached the server whatever the client saw.
 */
final class LoopbackServer implements AutoCloseable {

  /** Lines the line server received, in order. */
  final BlockingQueue<String> received = new LinkedBlockingQueue<>();

  /** {@link System#nanoTime()} just before each answer of the line server was written. */
  final BlockingQueue<Long> answeredAt = new LinkedBlockingQueue<>();

  final AtomicInteger accepted = new AtomicInteger();

  private final ServerSocket listener;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  private interface Handler {
    void serve(Socket socket) throws IOException;
  }

  static LoopbackServer echo() {
    return new LoopbackServer(
        socket -> socket.getInputStream().transferTo(socket.getOutputStream()));
  }

  static LoopbackServer lines() {
    return new LoopbackServer(null);
  }

  private LoopbackServer(Handler handler) {
    try {
      listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Handler serve = handler != null ? handler : this::answerLines;
    threads.execute(
        () -> {
          while (!listener.isClosed()) {
            try {
              Socket socket = listener.accept();
              accepted.incrementAndGet();
              threads.execute(() -> serveAndClose(socket, serve));
            } catch (IOException e) {
              return;
            }
          }
        });
  }

  int port() {
    return listener.getLocalPort();
  }

  private void answerLines(Socket socket) throws IOException {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    OutputStream out = socket.getOutputStream();
    for (String line; (line = in.readLine()) != null; ) {
      received.add(line);
      // Timed before the write, published after it: a proxy can read the answer before this
      // thread runs again, so a time taken after the write could be later than the proxy's
      // receipt and make a delayed answer look early.
      long answering = System.nanoTime();
      out.write(("re: " + line + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      answeredAt.add(answering);
    }
  }

  private static void serveAndClose(Socket socket, Handler handler) {
    try (socket) {
      handler.serve(socket);
      socket.shutdownOutput();
    } catch (IOException e) {
      // The proxy cut the connection: that is what the tests make it do.
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    threads.shutdownNow();
  }
}
