package io.kipam.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kipam.testing.FaultProxy.Fault;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FaultProxyTest {

  private static final long SEED = 42;
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);
  private static final int RESET_RUN_CONNECTIONS = 20;

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  @Test
  void passThroughCarriesConcurrentConnectionsByteForByteBothWays() throws Exception {
    FaultProxy proxy = proxyFor(LoopbackServer.echo());
    int connections = 8;
    int size = 256 * 1024;
    ExecutorService threads = Executors.newFixedThreadPool(2 * connections);
    try {
      List<Future<byte[]>> echoes = new ArrayList<>();
      List<byte[]> sent = new ArrayList<>();
      for (int i = 0; i < connections; i++) {
        byte[] payload = new byte[size];
        new Random(i).nextBytes(payload);
        sent.add(payload);
        Socket socket = connect(proxy);
        // Write and read at once: the echo could not otherwise drain a payload this large.
        threads.submit(
            () -> {
              socket.getOutputStream().write(payload);
              socket.shutdownOutput();
              return null;
            });
        echoes.add(threads.submit(() -> socket.getInputStream().readAllBytes()));
      }
      for (int i = 0; i < connections; i++) {
        assertThat(echoes.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(sent.get(i));
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(proxy.connections()).isEqualTo(connections);
    assertThat(proxy.bytesToServer()).isEqualTo((long) connections * size);
    assertThat(proxy.bytesToClient()).isEqualTo((long) connections * size);
    await().untilAsserted(() -> assertThat(proxy.liveConnections()).isZero());
  }

  @Test
  void dropAfterRequestDeliversTheRequestButNeverItsAnswer() throws Exception {
    LoopbackServer server = LoopbackServer.lines();
    FaultProxy proxy = proxyFor(server);
    LineClient client = new LineClient(connect(proxy));
    assertThat(client.exchange("before")).isEqualTo("re: before");

    proxy.inject(Faults.dropAfterRequest(1.0));
    client.send("create x");

    assertThat(client.readLineOrNullIfCut()).isNull();
    assertThat(server.received).containsExactly("before", "create x");
    assertThat(proxy.injected(Fault.DROPPED_AFTER_REQUEST)).isEqualTo(1);
  }

  @Test
  void delayedAnswerIsHeldBackAfterTheServerHasSentIt() throws Exception {
    LoopbackServer server = LoopbackServer.lines();
    FaultProxy proxy = proxyFor(server);
    proxy.inject(Faults.delayResponses(Duration.ofMinutes(10), 1.0));
    LineClient client = new LineClient(connect(proxy));

    client.send("slow");
    // The server has answered; the client must not have the answer yet.
    assertThat(server.answeredAt.poll(10, TimeUnit.SECONDS)).isNotNull();
    client.socket.setSoTimeout(300);
    assertThatThrownBy(client::readLineOrNullIfCut).isInstanceOf(SocketTimeoutException.class);
    assertThat(proxy.injected(Fault.DELAYED)).isEqualTo(1);
  }

  @Test
  void delayedAnswerArrivesIntactNoSoonerThanTheDelay() throws Exception {
    LoopbackServer server = LoopbackServer.lines();
    FaultProxy proxy = proxyFor(server);
    Duration delay = Duration.ofMillis(300);
    proxy.inject(Faults.delayResponses(delay, 1.0));
    LineClient client = new LineClient(connect(proxy));

    // Measured from the send, which comes before the server answers and the proxy starts to hold
    // the answer: a lower bound no busy machine can break (the server's own clock reading after
    // its write can come arbitrarily late).
    long sent = System.nanoTime();
    String answer = client.exchange("slow");
    long arrived = System.nanoTime();

    assertThat(answer).isEqualTo("re: slow");
    assertThat(arrived - sent).isGreaterThanOrEqualTo(delay.toNanos());
  }

  @Test
  void randomResetsCutSomeConnectionsAndCountEachOnce() throws Exception {
    List<Integer> cut = resetRun(SEED);

    assertThat(cut).isNotEmpty().hasSizeLessThan(RESET_RUN_CONNECTIONS);
    assertThat(resetRun(SEED)).as("the same seed resets the same connections").isEqualTo(cut);
  }

  /** Connections, one after the other, of five exchanges each; returns those that were cut. */
  private List<Integer> resetRun(long seed) throws Exception {
    LoopbackServer server = LoopbackServer.lines();
    toClose.add(server);
    FaultProxy proxy = FaultProxy.start(server.port(), seed);
    toClose.add(proxy);
    proxy.inject(Faults.resetAtRandom(0.05));
    List<Integer> cut = new ArrayList<>();
    for (int i = 0; i < RESET_RUN_CONNECTIONS; i++) {
      try (LineClient client = new LineClient(connect(proxy))) {
        for (int j = 0; j < 5; j++) {
          if (!("re: " + j).equals(client.exchangeOrNullIfCut(Integer.toString(j)))) {
            cut.add(i);
            break;
          }
        }
      }
    }
    assertThat(proxy.injected(Fault.RESET)).isEqualTo(cut.size());
    return cut;
  }

  @Test
  void closeAllCutsEveryLiveConnectionAndKeepsAccepting() throws Exception {
    FaultProxy proxy = proxyFor(LoopbackServer.lines());
    List<LineClient> clients = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      LineClient client = new LineClient(connect(proxy));
      assertThat(client.exchange("hello")).isEqualTo("re: hello");
      clients.add(client);
    }
    assertThat(proxy.liveConnections()).isEqualTo(3);

    assertThat(proxy.closeAll()).isEqualTo(3);

    for (LineClient client : clients) {
      assertThat(client.readLineOrNullIfCut()).isNull();
    }
    assertThat(proxy.liveConnections()).isZero();
    assertThat(new LineClient(connect(proxy)).exchange("again")).isEqualTo("re: again");
  }

  @Test
  void blackholeAcceptsButNeverConnectsUpstream() throws Exception {
    LoopbackServer server = LoopbackServer.lines();
    FaultProxy proxy = proxyFor(server);
    proxy.inject(Faults.blackholed());
    LineClient client = new LineClient(connect(proxy));

    client.send("anyone?");
    client.socket.setSoTimeout(300);

    assertThatThrownBy(client::readLineOrNullIfCut).isInstanceOf(SocketTimeoutException.class);
    assertThat(server.accepted).hasValue(0);
    assertThat(proxy.injected(Fault.BLACKHOLED)).isEqualTo(1);

    proxy.passThrough();
    assertThat(new LineClient(connect(proxy)).exchange("now")).isEqualTo("re: now");
  }

  @Test
  void closeStopsAcceptingAndCutsLiveConnections() throws Exception {
    LoopbackServer server = LoopbackServer.lines();
    toClose.add(server);
    FaultProxy proxy = FaultProxy.start(server.port(), SEED);
    LineClient client = new LineClient(connect(proxy));
    assertThat(client.exchange("hi")).isEqualTo("re: hi");

    proxy.close();

    assertThat(client.readLineOrNullIfCut()).isNull();
    assertThatThrownBy(() -> connect(proxy).getInputStream().read())
        .isInstanceOf(IOException.class);
  }

  @Test
  void faultsRejectAProbabilityOutsideZeroToOne() {
    assertThatThrownBy(() -> Faults.resetAtRandom(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resetAtRandom");
  }

  private FaultProxy proxyFor(LoopbackServer server) {
    toClose.add(server);
    FaultProxy proxy = FaultProxy.start(server.port(), SEED);
    toClose.add(proxy);
    return proxy;
  }

  private Socket connect(FaultProxy proxy) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
    socket.setSoTimeout((int) READ_TIMEOUT.toMillis());
    toClose.add(socket);
    return socket;
  }

  /** A client of {@link LoopbackServer#lines()}: one line out, one line back. */
  private static final class LineClient implements AutoCloseable {
    final Socket socket;
    private final BufferedReader in;
    private final OutputStream out;

    LineClient(Socket socket) throws IOException {
      this.socket = socket;
      this.in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      this.out = socket.getOutputStream();
    }

    void send(String line) throws IOException {
      out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
    }

    String exchange(String line) throws IOException {
      send(line);
      return in.readLine();
    }

    /** The answer, or null when the connection was closed or reset before it came. */
    String exchangeOrNullIfCut(String line) throws IOException {
      try {
        send(line);
      } catch (IOException e) {
        return null;
      }
      return readLineOrNullIfCut();
    }

    /** The next line, or null on end of stream or reset; a read timeout is thrown. */
    String readLineOrNullIfCut() throws IOException {
      try {
        return in.readLine();
      } catch (SocketTimeoutException e) {
        throw e;
      } catch (IOException e) {
        return null;
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
