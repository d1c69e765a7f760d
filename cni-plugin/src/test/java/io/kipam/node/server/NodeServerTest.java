package io.kipam.node.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kipam-node's HTTP server against clients that misbehave, over its real unix socket: bodies larger
 * than the cap however they are framed, and clients that send part of a request and stop.
 */
class NodeServerTest {

  /** Long enough that clients left hanging by a test are still hanging when it checks. */
  private static final Duration LONG_IDLE = Duration.ofMinutes(2);

  /** Bounds for answers that should come at once; generous, as the machine may be busy. */
  private static final Duration PROMPTLY = Duration.ofSeconds(20);

  @TempDir Path dir;

  private final AtomicInteger cniCalls = new AtomicInteger();
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final List<SocketChannel> clients = new CopyOnWriteArrayList<>();
  private NodeServer server;
  private Path socket;

  private final CniEndpoint endpoint =
      (env, stdin) -> {
        cniCalls.incrementAndGet();
        return new CniEndpoint.Answer(
            0, "{\"cniVersion\":\"1.1.0\"}".getBytes(StandardCharsets.UTF_8));
      };

  /**
   * An idle timeout shorter than the server's 5 s, for the tests about calls that outlast it. Not
   * shorter: a client thread of the test that the machine leaves unscheduled for longer between
   * connecting and sending its request would be closed for idling, rightly, and the test would fail
   * for it (300 ms did under a loaded suite).
   */
  private static final Duration SHORT_IDLE = Duration.ofSeconds(1);

  private void start(Duration idleTimeout, CniEndpoint cni) throws Exception {
    socket = dir.resolve("kipam.sock");
    server = new NodeServer(socket, cni, () -> true, new PrometheusRegistry(), idleTimeout);
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    for (SocketChannel client : clients) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
    threads.shutdownNow();
  }

  @Test
  void cniCallsAndHealthChecksAreServedWhileClientsHangHalfWayThroughTheirBodies()
      throws Exception {
    start(LONG_IDLE, endpoint);
    List<SocketChannel> hanging = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      SocketChannel client = connect();
      send(client, head("POST", "/v1/cni", "Content-Length: 1000") + "{\"env\":{},");
      hanging.add(client);
    }

    CompletableFuture<String> cni = async(() -> exchange(cniRequest()));
    CompletableFuture<String> health = async(() -> exchange(head("GET", "/healthz")));
    await().atMost(PROMPTLY).until(() -> cni.isDone() && health.isDone());

    assertThat(cni.join()).startsWith("HTTP/1.1 200 ").containsIgnoringCase("kipam-exit-code: 0");
    assertThat(health.join()).startsWith("HTTP/1.1 200 ").endsWith("ok\n");
    assertThat(cniCalls).hasValue(1);
    for (SocketChannel client : hanging) {
      client.configureBlocking(false);
      assertThat(client.read(ByteBuffer.allocate(1))).as("still waiting, no answer").isZero();
    }
  }

  @Test
  void aChunkedBodyOverTheCapIsRefusedWithoutBeingRead() throws Exception {
    start(LONG_IDLE, endpoint);
    SocketChannel client = connect();
    send(client, head("POST", "/v1/cni", "Transfer-Encoding: chunked"));
    long total = 64L << 20;
    AtomicLong sent = new AtomicLong();
    // Valid base64 all the way, so a server that read it all would hand 48 MB to the endpoint.
    CompletableFuture<Boolean> cutOff =
        async(
            () -> {
              byte[] chunk = new byte[64 << 10];
              Arrays.fill(chunk, (byte) 'A');
              try {
                send(client, "13\r\n{\"env\":{},\"stdin\":\"\r\n");
                while (sent.get() < total) {
                  send(client, Integer.toHexString(chunk.length) + "\r\n");
                  client.write(ByteBuffer.wrap(chunk));
                  send(client, "\r\n");
                  sent.addAndGet(chunk.length);
                }
                send(client, "2\r\n\"}\r\n0\r\n\r\n");
                return false;
              } catch (IOException e) {
                return true;
              }
            });

    String status = within(Duration.ofSeconds(60), () -> statusLine(client));

    assertThat(status).startsWith("HTTP/1.1 413 ");
    assertThat(cniCalls).hasValue(0);
    await().atMost(PROMPTLY).until(cutOff::isDone);
    assertThat(cutOff.join()).as("the server closed the connection instead of reading on").isTrue();
    assertThat(sent.get()).isLessThan(total);
  }

  @Test
  void aContentLengthOverTheCapIsRefused() throws Exception {
    start(LONG_IDLE, endpoint);
    SocketChannel client = connect();
    send(
        client,
        head("POST", "/v1/cni", "Content-Length: " + (NodeServer.MAX_REQUEST_BYTES + 1))
            + "{\"env\":{}");

    String status = within(PROMPTLY, () -> statusLine(client));

    assertThat(status).startsWith("HTTP/1.1 413 ");
    assertThat(cniCalls).hasValue(0);
  }

  @Test
  void aClientThatStopsHalfWayThroughItsBodyIsDisconnectedAfterTheIdleTimeout() throws Exception {
    start(Duration.ofMillis(500), endpoint);
    SocketChannel client = connect();
    send(client, head("POST", "/v1/cni", "Content-Length: 1000") + "{\"env\":{},");

    String rest = within(PROMPTLY, () -> readToEnd(client));

    assertThat(rest).startsWith("HTTP/1.1 408 ");
    assertThat(cniCalls).hasValue(0);
  }

  @Test
  void aCniCallThatOutlastsTheIdleTimeoutStillGetsItsAnswer() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    start(SHORT_IDLE, heldUntil(finish, entered::countDown));
    CompletableFuture<String> cni = async(() -> exchange(cniRequest()));
    await().atMost(PROMPTLY).until(() -> entered.getCount() == 0);
    // A connection opened while the call runs, and closed for being idle: the call, silent on its
    // connection since its request was read, has now been silent for longer than the timeout.
    SocketChannel idle = connect();
    CompletableFuture<String> idleEnd = async(() -> readToEnd(idle));
    await().atMost(PROMPTLY).until(idleEnd::isDone);
    assertThat(cni).isNotDone();
    finish.countDown();

    await().atMost(PROMPTLY).until(cni::isDone);
    assertThat(cni.join()).startsWith("HTTP/1.1 200 ").containsIgnoringCase("kipam-exit-code: 0");
  }

  @Test
  void everyCallOfABurstLargerThanTheServersThreadsIsAnsweredThoughItOutlastsTheIdleTimeout()
      throws Exception {
    Duration idle = SHORT_IDLE;
    // Which connections wait past the idle timeout depends on thread scheduling, so a few bursts.
    for (int round = 0; round < 5; round++) {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicInteger entered = new AtomicInteger();
      cniCalls.set(0);
      start(idle, heldUntil(finish, entered::incrementAndGet));
      List<CompletableFuture<String>> calls = new ArrayList<>();
      for (int i = 0; i < 150; i++) {
        calls.add(async(() -> exchange(cniRequest())));
      }
      // The daemon works on the burst for several idle timeouts before it answers any of it.
      await().atMost(PROMPTLY).until(() -> entered.get() >= 50);
      Thread.sleep(idle.multipliedBy(3).toMillis());
      finish.countDown();

      await().atMost(PROMPTLY).until(() -> calls.stream().allMatch(CompletableFuture::isDone));
      long unanswered = calls.stream().filter(c -> !c.join().startsWith("HTTP/1.1 200 ")).count();
      System.out.printf("round %d: %d of %d calls unanswered%n", round, unanswered, calls.size());
      assertThat(unanswered).as("calls closed without an answer").isZero();
      assertThat(cniCalls).hasValue(calls.size());
      server.close();
      server = null;
    }
  }

  private SocketChannel connect() throws IOException {
    SocketChannel client = SocketChannel.open(StandardProtocolFamily.UNIX);
    clients.add(client);
    client.connect(UnixDomainSocketAddress.of(socket));
    return client;
  }

  /** The real endpoint, reached only once {@code finish} opens; {@code entered} runs on arrival. */
  private CniEndpoint heldUntil(CountDownLatch finish, Runnable entered) {
    return (env, stdin) -> {
      entered.run();
      try {
        finish.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return endpoint.handle(env, stdin);
    };
  }

  private static String head(String method, String path, String... headers) {
    StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: kipam\r\n");
    for (String header : headers) {
      head.append(header).append("\r\n");
    }
    return head.append("\r\n").toString();
  }

  private static String cniRequest() {
    String stdin = Base64.getEncoder().encodeToString("{}".getBytes(StandardCharsets.UTF_8));
    String body = "{\"env\":{\"CNI_COMMAND\":\"ADD\"},\"stdin\":\"" + stdin + "\"}";
    return head("POST", "/v1/cni", "Content-Length: " + body.length(), "Connection: close") + body;
  }

  private static void send(SocketChannel client, String text) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    while (bytes.hasRemaining()) {
      client.write(bytes);
    }
  }

  /** One request on a new connection; the answer up to the end of the stream. */
  private String exchange(String request) throws IOException {
    SocketChannel client = connect();
    send(client, request.contains("Connection: close") ? request : withClose(request));
    return readToEnd(client);
  }

  private static String withClose(String request) {
    return request.replaceFirst("\r\n\r\n", "\r\nConnection: close\r\n\r\n");
  }

  private static String readToEnd(SocketChannel client) throws IOException {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    ByteBuffer buffer = ByteBuffer.allocate(8192);
    while (client.read(buffer) >= 0) {
      all.write(buffer.array(), 0, buffer.position());
      buffer.clear();
    }
    return all.toString(StandardCharsets.ISO_8859_1);
  }

  private static String statusLine(SocketChannel client) throws IOException {
    StringBuilder line = new StringBuilder();
    ByteBuffer one = ByteBuffer.allocate(1);
    while (line.indexOf("\r\n") < 0) {
      one.clear();
      if (client.read(one) < 0) {
        break;
      }
      line.append((char) one.get(0));
    }
    return line.toString();
  }

  /** What {@code call} returns, run on another thread and awaited for at most {@code limit}. */
  private <T> T within(Duration limit, Callable<T> call) {
    CompletableFuture<T> result = async(call);
    await().atMost(limit).until(result::isDone);
    return result.join();
  }

  private <T> CompletableFuture<T> async(Callable<T> call) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return call.call();
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        },
        threads);
  }

  @Test
  void probesAndMetricsAreServedOverTcpButCniCallsAreNot() throws Exception {
    socket = dir.resolve("kipam.sock");
    server =
        new NodeServer(socket, endpoint, () -> false, new PrometheusRegistry(), LONG_IDLE)
            .probesOn(new InetSocketAddress("127.0.0.1", 0));
    server.start();
    HttpClient http = HttpClient.newHttpClient();
    String base = "http://127.0.0.1:" + server.probePort();

    assertThat(get(http, base + "/healthz").statusCode()).isEqualTo(200);
    assertThat(get(http, base + "/readyz").statusCode()).isEqualTo(503);
    assertThat(get(http, base + "/metrics").statusCode()).isEqualTo(200);
    HttpResponse<String> cni =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/v1/cni"))
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(cni.statusCode()).isEqualTo(404);
    assertThat(cni.body()).contains("unix socket only");
    assertThat(cniCalls).hasValue(0);
  }

  @Test
  void rehearsalsAreAnsweredOnlyWhileRehearsingByTheirOwnEndpointAndNeverOverTcp()
      throws Exception {
    socket = dir.resolve("kipam.sock");
    server =
        new NodeServer(socket, endpoint, () -> true, new PrometheusRegistry(), LONG_IDLE)
            .probesOn(new InetSocketAddress("127.0.0.1", 0));
    server.start();
    String rehearsal = cniRequest().replaceFirst("/v1/cni", "/v1/rehearsal");
    assertThat(exchange(rehearsal)).as("before a rehearsal").startsWith("HTTP/1.1 404 ");

    AtomicInteger rehearsed = new AtomicInteger();
    server.rehearsals(
        (env, stdin) -> {
          rehearsed.incrementAndGet();
          return new CniEndpoint.Answer(7, "{}".getBytes(StandardCharsets.UTF_8));
        });
    assertThat(exchange(rehearsal))
        .startsWith("HTTP/1.1 200 ")
        .containsIgnoringCase("kipam-exit-code: 7");
    HttpResponse<String> overTcp =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.probePort() + "/v1/rehearsal"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(overTcp.statusCode()).isEqualTo(404);

    server.rehearsals(null);
    assertThat(exchange(rehearsal)).as("after the rehearsal").startsWith("HTTP/1.1 404 ");
    assertThat(rehearsed).hasValue(1);
    assertThat(cniCalls).as("the CNI endpoint never saw a rehearsal").hasValue(0);
  }

  private static HttpResponse<String> get(HttpClient http, String url) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
