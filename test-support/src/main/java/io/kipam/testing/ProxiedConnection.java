package io.kipam.testing;

import io.kipam.testing.FaultProxy.Fault;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection through a {@link FaultProxy}: a thread per direction copies chunks as they
 * arrive and, before each chunk, asks the proxy's current {@link Faults} what to do with it. Each
 * direction draws from its own random sequence, seeded from the proxy's seed and the connection's
 * number, so the same traffic under the same seed meets the same faults whatever the threads'
 * timing. A blackholed connection has no server side: its client's bytes are read and discarded.
 */
final class ProxiedConnection {

  private static final Logger log = LoggerFactory.getLogger(ProxiedConnection.class);
  private static final int CHUNK = 16 * 1024;

  private final long number;
  private final Socket client;
  private final Socket server;
  private final Supplier<Faults> faults;
  private final ProxyCounters counters;
  private final Consumer<ProxiedConnection> onClose;
  private final SplittableRandom toServerRandom;
  private final SplittableRandom toClientRandom;
  private final RequestDetector requests = new RequestDetector();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CountDownLatch closedSignal = new CountDownLatch(1);
  private final AtomicInteger openDirections = new AtomicInteger(2);

  // A request went upstream whose answer must never reach the client.
  private volatile boolean dropping;
  // The client sent data since the server last did: the server's next bytes start an answer.
  private volatile boolean awaitingAnswer;

  ProxiedConnection(
      long number,
      long seed,
      Socket client,
      Socket server,
      Supplier<Faults> faults,
      ProxyCounters counters,
      Consumer<ProxiedConnection> onClose) {
    this.number = number;
    this.client = client;
    this.server = server;
    this.faults = faults;
    this.counters = counters;
    this.onClose = onClose;
    // Mixed, because SplittableRandoms whose seeds differ by a multiple of its step (as seed + n *
    // constant would) draw the same numbers shifted by a few places.
    SplittableRandom random = new SplittableRandom(mix(mix(seed) + number));
    this.toServerRandom = random.split();
    this.toClientRandom = random.split();
  }

  void start(ExecutorService executor) {
    if (server == null) {
      executor.execute(this::discardClientBytes);
    } else {
      executor.execute(this::forwardToServer);
      executor.execute(this::forwardToClient);
    }
  }

  /** Closes both sides with a reset, as a failing network or a crashed peer would. */
  void abort() {
    close(true);
  }

  private void forwardToServer() {
    byte[] chunk = new byte[CHUNK];
    try {
      InputStream in = client.getInputStream();
      OutputStream out = server.getOutputStream();
      for (int n; (n = in.read(chunk)) != -1; ) {
        Faults now = faults.get();
        if (roll(toServerRandom, now.resetAtRandom())) {
          resetByFault();
          return;
        }
        // The detector must see every chunk to keep its place in the TLS framing.
        boolean request = requests.carriesRequest(chunk, n);
        log.trace("connection {}: {} bytes to the server, request {}", number, n, request);
        if (request && roll(toServerRandom, now.dropAfterRequest())) {
          log.debug("connection {}: the answer to this request will be dropped", number);
          dropping = true;
        }
        awaitingAnswer = true;
        out.write(chunk, 0, n);
        counters.bytesToServer.add(n);
      }
      server.shutdownOutput();
      directionDone();
    } catch (IOException e) {
      // A peer reset or this proxy closed the connection: pass the abort on to the other side.
      abort();
    }
  }

  private void forwardToClient() {
    byte[] chunk = new byte[CHUNK];
    try {
      InputStream in = server.getInputStream();
      OutputStream out = client.getOutputStream();
      for (int n; (n = in.read(chunk)) != -1; ) {
        log.trace("connection {}: {} bytes to the client", number, n);
        Faults now = faults.get();
        if (dropping) {
          // The server has started to answer, so it has read the request: now lose the answer.
          log.debug("connection {}: dropped after the request, {} bytes of answer", number, n);
          counters.injected(Fault.DROPPED_AFTER_REQUEST);
          close(false);
          return;
        }
        if (roll(toClientRandom, now.resetAtRandom())) {
          resetByFault();
          return;
        }
        if (awaitingAnswer) {
          awaitingAnswer = false;
          if (roll(toClientRandom, now.delayProbability())) {
            log.debug("connection {}: answer delayed by {}", number, now.delay());
            counters.injected(Fault.DELAYED);
            if (closedSignal.await(now.delay().toNanos(), TimeUnit.NANOSECONDS)) {
              return;
            }
          }
        }
        out.write(chunk, 0, n);
        counters.bytesToClient.add(n);
      }
      client.shutdownOutput();
      directionDone();
    } catch (IOException e) {
      abort();
    } catch (InterruptedException e) {
      // The proxy is shutting down.
      Thread.currentThread().interrupt();
      abort();
    }
  }

  private void discardClientBytes() {
    byte[] chunk = new byte[CHUNK];
    try {
      InputStream in = client.getInputStream();
      while (in.read(chunk) != -1) {
        // Never forwarded, never answered.
      }
      close(false);
    } catch (IOException e) {
      abort();
    }
  }

  private void resetByFault() {
    log.debug("connection {}: reset", number);
    counters.injected(Fault.RESET);
    abort();
  }

  private void directionDone() {
    if (openDirections.decrementAndGet() == 0) {
      close(false);
    }
  }

  /** The 64-bit finalizer SplittableRandom itself uses (Stafford's variant 13). */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static boolean roll(SplittableRandom random, double probability) {
    return probability > 0 && random.nextDouble() < probability;
  }

  private void close(boolean reset) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    closedSignal.countDown();
    closeSocket(client, reset);
    if (server != null) {
      closeSocket(server, reset);
    }
    onClose.accept(this);
  }

  static void closeSocket(Socket socket, boolean reset) {
    try {
      if (reset) {
        // Linger 0 makes close() send RST instead of FIN: the peer sees "connection reset".
        socket.setSoLinger(true, 0);
      }
      socket.close();
    } catch (IOException e) {
      // Already closed by the peer or the other direction; nothing left to do.
    }
  }
}
