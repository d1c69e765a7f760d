package io.kipam.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Carries TCP connections from 127.0.0.1 of this JVM's network namespace to 127.0.0.1 of another
 * one, port for port, through unix sockets (which belong to the file system, not to a network
 * namespace). {@link #main} is the far side, started inside the namespace with {@code nsenter
 * --net}: for each port it listens on {@code <dir>/<port>.sock} and connects each caller to
 * 127.0.0.1:port there. {@link #near} is this side: it listens on 127.0.0.1:port here and connects
 * each caller to the socket. Bytes pass untouched, so TLS works end to end. Uses only the JDK, so
 * the far side needs nothing on its class path but this class.
 */
public final class NamespaceBridge implements AutoCloseable {

  private final List<AutoCloseable> listeners = new ArrayList<>();

  private NamespaceBridge() {}

  /** The far side: {@code NamespaceBridge <socket dir> <port>...}, run inside the namespace. */
  public static void main(String[] args) throws IOException, InterruptedException {
    Path dir = Path.of(args[0]);
    for (int i = 1; i < args.length; i++) {
      int port = Integer.parseInt(args[i]);
      Path socket = dir.resolve(port + ".sock");
      Files.deleteIfExists(socket);
      ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      server.bind(UnixDomainSocketAddress.of(socket));
      InetSocketAddress target = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
      daemon("far-" + port, () -> serve(server, () -> SocketChannel.open(target)));
    }
    // Runs until it is stopped.
    Thread.currentThread().join();
  }

  /** The near side: listens on 127.0.0.1 of this namespace at each port given to the far side. */
  static NamespaceBridge near(Path dir, List<Integer> ports) {
    NamespaceBridge bridge = new NamespaceBridge();
    for (int port : ports) {
      try {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.INET);
        server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        bridge.listeners.add(server);
        UnixDomainSocketAddress socket = UnixDomainSocketAddress.of(dir.resolve(port + ".sock"));
        daemon("near-" + port, () -> serve(server, () -> SocketChannel.open(socket)));
      } catch (IOException e) {
        bridge.close();
        throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port, e);
      }
    }
    return bridge;
  }

  private interface Connector {
    SocketChannel connect() throws IOException;
  }

  /** Accepts until the listener closes; a caller whose target cannot be reached is hung up on. */
  private static void serve(ServerSocketChannel server, Connector connector) throws IOException {
    while (true) {
      SocketChannel caller = server.accept();
      try {
        SocketChannel target = connector.connect();
        daemon("pump", () -> pump(caller, target));
        daemon("pump", () -> pump(target, caller));
      } catch (IOException e) {
        caller.close();
      }
    }
  }

  @Override
  public void close() {
    for (AutoCloseable l : listeners) {
      try {
        l.close();
      } catch (Exception e) {
        // closing a listener that is already closed
      }
    }
  }

  private interface Loop {
    void run() throws Exception;
  }

  private static void daemon(String name, Loop loop) {
    Thread t =
        new Thread(
            () -> {
              try {
                loop.run();
              } catch (Exception e) {
                // a listener or connection closed: the bridge or that connection is done
              }
            },
            "namespace-bridge-" + name);
    t.setDaemon(true);
    t.start();
  }

  private static void pump(SocketChannel from, SocketChannel to) throws IOException {
    try (from;
        to) {
      ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
      while (from.read(buffer) >= 0) {
        buffer.flip();
        while (buffer.hasRemaining()) {
          to.write(buffer);
        }
        buffer.clear();
      }
    }
  }
}
