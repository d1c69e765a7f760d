package io.kipam.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP proxy on 127.0.0.1 that injects network faults between a client and a server on another
 * loopback port, typically kipam-node and the real kube-apiserver. It works on bytes, so TLS passes
 * through untouched: the API server's certificate is valid for 127.0.0.1, and a kubeconfig pointing
 * at {@code https://127.0.0.1:<port()>} works (see {@link ControlPlane#kubeconfigVia(int)}).
 *
 * <p>It starts in pass-through. {@link #inject(Faults)} switches what it does at any time, from any
 * thread; live connections follow the new setting from their next chunk on, except for {@link
 * Faults#blackhole()}, which only takes new connections (follow it with {@link #closeAll()} to push
 * clients onto new ones). Random choices come from the seed given to {@link #start(int, long)} and
 * the connection's number, so a failing test can be replayed with the seed it logged. Counters show
 * what was carried and which faults were actually injected, so a test can assert that its faults
 * happened. Listens on loopback only and connects only to the loopback port it was given.
 */
public final class FaultProxy implements AutoCloseable {

  /** The faults a proxy counts, see {@link #injected(Fault)}. */
  public enum Fault {
    /** A request was forwarded, then the connection cut as the server began to answer. */
    DROPPED_AFTER_REQUEST,
    /** An answer was held back for the configured delay. */
    DELAYED,
    /** A connection was reset at random. */
    RESET,
    /** A connection was accepted into the blackhole. */
    BLACKHOLED
  }

  private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
  private static final int CONNECT_TIMEOUT_MILLIS = 5_000;

  private final int upstreamPort;
  private final long seed;
  private final ServerSocket listener;
  private final ExecutorService pumps;
  private final Thread acceptor;
  private final Set<ProxiedConnection> live = ConcurrentHashMap.newKeySet();
  private final ProxyCounters counters = new ProxyCounters();
  private final AtomicLong nextConnection = new AtomicLong();
  private volatile Faults faults = Faults.none();
  private volatile boolean closed;

  /** Starts a proxy on a free port of 127.0.0.1 in front of {@code 127.0.0.1:upstreamPort}. */
  public static FaultProxy start(int upstreamPort, long seed) {
    return new FaultProxy(upstreamPort, seed);
  }

  /** As {@link #start(int, long)} with a seed taken from the clock, and logged. */
  public static FaultProxy start(int upstreamPort) {
    return start(upstreamPort, System.nanoTime());
  }

  private FaultProxy(int upstreamPort, long seed) {
    if (upstreamPort < 1 || upstreamPort > 65_535) {
      throw new IllegalArgumentException("not a TCP port: " + upstreamPort);
    }
    this.upstreamPort = upstreamPort;
    this.seed = seed;
    try {
      this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException("no free loopback port for the fault proxy", e);
    }
    String name = "fault-proxy-" + listener.getLocalPort();
    AtomicLong threads = new AtomicLong();
    this.pumps =
        Executors.newCachedThreadPool(
            task -> daemon(task, name + "-pump-" + threads.incrementAndGet()));
    this.acceptor = daemon(this::acceptLoop, name + "-accept");
    acceptor.start();
    log.info("fault proxy 127.0.0.1:{} -> 127.0.0.1:{}, seed {}", port(), upstreamPort, seed);
  }

  /** The loopback port clients connect to. */
  public int port() {
    return listener.getLocalPort();
  }

  public long seed() {
    return seed;
  }

  /** Replaces the current faults; {@link Faults#none()} is pass-through. */
  public void inject(Faults faults) {
    this.faults = Objects.requireNonNull(faults, "faults");
    log.info("fault proxy {}: {}", port(), faults);
  }

  public void passThrough() {
    inject(Faults.none());
  }

  public Faults faults() {
    return faults;
  }

  /** Resets every live connection at once and returns how many there were. */
  public int closeAll() {
    List<ProxiedConnection> cut = List.copyOf(live);
    cut.forEach(ProxiedConnection::abort);
    log.info("fault proxy {}: cut {} live connection(s)", port(), cut.size());
    return cut.size();
  }

  /** Connections accepted so far. */
  public long connections() {
    return counters.connections.sum();
  }

  public int liveConnections() {
    return live.size();
  }

  public long bytesToServer() {
    return counters.bytesToServer.sum();
  }

  public long bytesToClient() {
    return counters.bytesToClient.sum();
  }

  /** How many times {@code fault} was actually injected. */
  public long injected(Fault fault) {
    return counters.count(fault);
  }

  /** Stops accepting, resets every live connection and stops the proxy's threads. */
  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException e) {
      log.debug("fault proxy {}: closing the listener: {}", port(), e.toString());
    }
    closeAll();
    pumps.shutdownNow();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        if (!closed) {
          log.warn("fault proxy {}: accept failed: {}", port(), e.toString());
        }
        continue;
      }
      counters.connections.increment();
      open(client, nextConnection.getAndIncrement());
    }
  }

  private void open(Socket client, long number) {
    Socket server = null;
    try {
      client.setTcpNoDelay(true);
      if (faults.blackhole()) {
        counters.injected(Fault.BLACKHOLED);
      } else {
        server = new Socket();
        // Chunks are forwarded as they come; Nagle would hold small ones back.
        server.setTcpNoDelay(true);
        server.connect(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort),
            CONNECT_TIMEOUT_MILLIS);
      }
    } catch (IOException e) {
      // Upstream down (e.g. the API server stopped): the client sees its connection reset.
      log.debug("fault proxy {}: upstream {} refused: {}", port(), upstreamPort, e.toString());
      ProxiedConnection.closeSocket(client, true);
      if (server != null) {
        ProxiedConnection.closeSocket(server, false);
      }
      return;
    }
    ProxiedConnection connection =
        new ProxiedConnection(number, seed, client, server, () -> faults, counters, live::remove);
    live.add(connection);
    try {
      connection.start(pumps);
    } catch (RejectedExecutionException e) {
      connection.abort();
    }
    if (closed) {
      // close() may have run closeAll() before this connection was registered.
      connection.abort();
    }
  }

  private static Thread daemon(Runnable task, String name) {
    Thread thread = new Thread(task, name);
    thread.setDaemon(true);
    return thread;
  }
}
