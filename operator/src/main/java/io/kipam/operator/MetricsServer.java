package io.kipam.operator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The operator's HTTP port: {@code /metrics} (Prometheus text format), {@code /healthz} (the
 * process serves) and {@code /readyz} (200 once the operator has started: a leader whose caches
 * have synced, or a standby waiting for the Lease). The JDK's own server is enough for three
 * read-only endpoints scraped every few seconds.
 */
final class MetricsServer implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService executor;

  MetricsServer(int port, PrometheusRegistry registry, BooleanSupplier ready) throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 16);
    executor =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "kipam-operator-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext(
        "/metrics",
        exchange -> {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          PrometheusTextFormatWriter.create().write(out, registry.scrape());
          send(exchange, 200, PrometheusTextFormatWriter.CONTENT_TYPE, out.toByteArray());
        });
    server.createContext("/healthz", exchange -> text(exchange, 200, "ok\n"));
    server.createContext(
        "/readyz",
        exchange -> {
          boolean ok = ready.getAsBoolean();
          text(exchange, ok ? 200 : 503, ok ? "ready\n" : "not ready\n");
        });
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  private static void text(HttpExchange exchange, int code, String body) throws IOException {
    send(exchange, code, "text/plain; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
  }

  private static void send(HttpExchange exchange, int code, String type, byte[] body)
      throws IOException {
    try (exchange) {
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(code, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
