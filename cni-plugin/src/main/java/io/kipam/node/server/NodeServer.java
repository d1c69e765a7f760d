package io.kipam.node.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam-node's HTTP server on its unix socket (mode 0600: only root, who runs the container runtime
 * and so the CNI executable, may connect). {@code POST /v1/cni} carries one CNI call from the
 * {@code kipam} executable; {@code /healthz}, {@code /readyz} and {@code /metrics} are for probes
 * and Prometheus.
 *
 * <p>Clients that misbehave cost little: request bodies are capped at {@link #MAX_REQUEST_BYTES}
 * however they are framed, they are read without holding a thread while the client is slow, and a
 * connection silent for the idle timeout is closed, so a few stuck clients cannot keep CNI calls or
 * health checks waiting.
 *
 * <p>Calls that keep the daemon busy cost the client nothing either: the idle timeout applies only
 * while the server waits for the client, never while a call it has read is queued or running. CNI
 * calls run on threads of their own, not on the server's, so a burst of slow calls never leaves the
 * server without a thread to read the next request (whose connection would then look idle and be
 * closed unanswered); calls beyond {@link #CNI_THREADS} wait their turn, bounded only by the
 * caller's own deadline.
 */
public final class NodeServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(NodeServer.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Request bodies above this are refused (413) as soon as they are known to be larger, whether by
   * their Content-Length or by counting chunks: a CNI configuration is small.
   */
  static final int MAX_REQUEST_BYTES = 4 << 20;

  /**
   * How long a connection may stay silent (a client that stops in the middle of its request, or
   * holds a connection it does not use) before the server closes it. The executable sends its whole
   * call at once, so a few seconds are plenty. Time the daemon spends on a call it has read does
   * not count: the executable's own deadline bounds that.
   */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(5);

  /** CNI calls running at once; they mostly wait on the API server, so more than the cores. */
  static final int CNI_THREADS = 64;

  /**
   * Connections the kernel holds for the server before it accepts them: a burst of pods started at
   * once on a busy node must not meet a full queue (the JDK's default is 50).
   */
  static final int ACCEPT_QUEUE = 1024;

  private final Server server;
  private final QueuedThreadPool cniThreads;
  private final Path socket;
  private volatile CniEndpoint rehearsal;

  public NodeServer(
      Path socket, CniEndpoint cni, BooleanSupplier ready, PrometheusRegistry registry) {
    this(socket, cni, ready, registry, DEFAULT_IDLE_TIMEOUT);
  }

  public NodeServer(
      Path socket,
      CniEndpoint cni,
      BooleanSupplier ready,
      PrometheusRegistry registry,
      Duration idleTimeout) {
    this.socket = socket;
    // The server's own threads only read requests and write answers (the calls run on
    // cniThreads): its acceptors and selectors and a few more.
    QueuedThreadPool threads = new QueuedThreadPool(10, 4);
    threads.setName("kipam-node-http");
    threads.setReservedThreads(0);
    server = new Server(threads);
    UnixDomainServerConnector connector = new UnixDomainServerConnector(server);
    connector.setUnixDomainPath(socket);
    connector.setIdleTimeout(idleTimeout.toMillis());
    connector.setAcceptQueueSize(ACCEPT_QUEUE);
    server.addConnector(connector);
    cniThreads = cniThreads();
    server.addBean(cniThreads); // started and stopped with the server
    server.setHandler(new Routes(cni, () -> rehearsal, cniThreads, ready, registry));
  }

  /**
   * The CNI calls' threads: a new one only when no idle one can take a call, so a node serving 8
   * calls at once keeps about 8, not {@link #CNI_THREADS}; idle ones end after 30 s.
   */
  private static QueuedThreadPool cniThreads() {
    QueuedThreadPool pool = new QueuedThreadPool(CNI_THREADS, 1, 30_000);
    pool.setName("kipam-node-cni");
    pool.setDaemon(true);
    pool.setReservedThreads(0);
    return pool;
  }

  /**
   * Serves {@code /v1/rehearsal} on the socket, a CNI call answered by {@code endpoint} (not
   * counted in the metrics), while kipam-node rehearses its call path; {@code null} ends it, and
   * the path is then unknown (404).
   */
  public void rehearsals(CniEndpoint endpoint) {
    rehearsal = endpoint;
  }

  /**
   * Serves {@code /healthz}, {@code /readyz} and {@code /metrics} on {@code address} over TCP as
   * well, for kubelet's probes and Prometheus. CNI calls are refused there: only root may make
   * them, through the socket. Call before {@link #start}; port 0 picks a free port ({@link
   * #probePort}).
   */
  public NodeServer probesOn(InetSocketAddress address) {
    ServerConnector tcp = new ServerConnector(server);
    tcp.setHost(address.getHostString());
    tcp.setPort(address.getPort());
    tcp.setIdleTimeout(DEFAULT_IDLE_TIMEOUT.toMillis());
    server.addConnector(tcp);
    return this;
  }

  /** The TCP port of {@link #probesOn}, once started; -1 without one. */
  public int probePort() {
    for (var connector : server.getConnectors()) {
      if (connector instanceof ServerConnector tcp) {
        return tcp.getLocalPort();
      }
    }
    return -1;
  }

  public void start() throws Exception {
    Files.createDirectories(socket.getParent());
    // A socket left by a daemon that died is in the way; the node lock guarantees it is not live.
    Files.deleteIfExists(socket);
    server.start();
    Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
    log.info("serving CNI calls on {}", socket);
    if (probePort() > 0) {
      log.info("serving /healthz, /readyz and /metrics on TCP port {} as well", probePort());
    }
  }

  @Override
  public void close() throws Exception {
    server.stop();
    Files.deleteIfExists(socket);
  }

  private static final class Routes extends Handler.Abstract {
    private final CniEndpoint cni;
    private final Supplier<CniEndpoint> rehearsal;
    private final Executor cniThreads;
    private final BooleanSupplier ready;
    private final PrometheusRegistry registry;

    Routes(
        CniEndpoint cni,
        Supplier<CniEndpoint> rehearsal,
        Executor cniThreads,
        BooleanSupplier ready,
        PrometheusRegistry registry) {
      this.cni = cni;
      this.rehearsal = rehearsal;
      this.cniThreads = cniThreads;
      this.ready = ready;
      this.registry = registry;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      String path = Request.getPathInContext(request);
      switch (path) {
        case "/v1/cni" -> {
          if (request.getConnectionMetaData().getConnector() instanceof ServerConnector) {
            text(response, callback, 404, "CNI calls are served on the unix socket only\n");
          } else {
            cni(cni, request, response, callback);
          }
        }
        case "/v1/rehearsal" -> {
          CniEndpoint rehearsing = rehearsal.get();
          if (rehearsing == null
              || request.getConnectionMetaData().getConnector() instanceof ServerConnector) {
            text(response, callback, 404, "no such path\n");
          } else {
            cni(rehearsing, request, response, callback);
          }
        }
        case "/healthz" -> text(response, callback, 200, "ok\n");
        case "/readyz" -> {
          boolean ok = ready.getAsBoolean();
          text(response, callback, ok ? 200 : 503, ok ? "ok\n" : "not ready\n");
        }
        case "/metrics" -> {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          PrometheusTextFormatWriter.create().write(out, registry.scrape());
          response
              .getHeaders()
              .put(HttpHeader.CONTENT_TYPE, PrometheusTextFormatWriter.CONTENT_TYPE);
          response.write(true, ByteBuffer.wrap(out.toByteArray()), callback);
        }
        default -> text(response, callback, 404, "no such path\n");
      }
      return true;
    }

    /**
     * Reads the envelope without holding a thread (see {@link BoundedBody}), then makes the CNI
     * call on a CNI thread: it may wait on the API server, and must never do so on a selector, nor
     * take the threads the server needs to read other requests.
     */
    private void cni(CniEndpoint endpoint, Request request, Response response, Callback callback) {
      if (!"POST".equals(request.getMethod())) {
        text(response, callback, 405, "POST only\n");
        return;
      }
      if (request.getLength() > MAX_REQUEST_BYTES) {
        tooLarge(response, callback);
        return;
      }
      BoundedBody.read(
          request,
          MAX_REQUEST_BYTES,
          new BoundedBody.Outcome() {
            @Override
            public void complete(byte[] body) {
              try {
                cniThreads.execute(() -> call(endpoint, body, response, callback));
              } catch (RuntimeException e) {
                callback.failed(e);
              }
            }

            @Override
            public void tooLarge() {
              Routes.tooLarge(response, callback);
            }

            @Override
            public void failed(Throwable failure) {
              if (failure instanceof TimeoutException) {
                text(response, callback, 408, "request body not received in time\n");
              } else {
                callback.failed(failure);
              }
            }
          });
    }

    private void call(CniEndpoint endpoint, byte[] body, Response response, Callback callback) {
      try {
        JsonNode envelope;
        try {
          envelope = JSON.readTree(body);
        } catch (IOException e) {
          text(response, callback, 400, "not a kipam CNI envelope: " + e.getMessage() + "\n");
          return;
        }
        Map<String, String> env = new LinkedHashMap<>();
        envelope.path("env").properties().forEach(e -> env.put(e.getKey(), e.getValue().asText()));
        byte[] stdin = Base64.getDecoder().decode(envelope.path("stdin").asText(""));
        CniEndpoint.Answer answer = endpoint.handle(env, stdin);
        response.setStatus(200);
        response.getHeaders().put("Kipam-Exit-Code", Integer.toString(answer.exitCode()));
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, answer.stdout().length);
        response.write(true, ByteBuffer.wrap(answer.stdout()), callback);
      } catch (RuntimeException e) {
        callback.failed(e);
      }
    }

    private static void tooLarge(Response response, Callback callback) {
      text(response, callback, 413, "request larger than " + MAX_REQUEST_BYTES + " bytes\n");
    }

    private static void text(Response response, Callback callback, int status, String body) {
      response.setStatus(status);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
      Content.Sink.write(response, true, body, callback);
    }
  }
}
