package io.kipam.node.kube;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Every request kipam-node's client sends to the API server, by verb and resource, counted as its
 * answer arrives: what a node's start and its pods cost the cluster ({@code
 * kipam_node_api_requests_total}). A watch counts once, when it opens; a retried request counts
 * each time.
 */
public final class ApiRequests implements Interceptor {

  private final Counter requests;

  public ApiRequests(PrometheusRegistry registry) {
    requests =
        Counter.builder()
            .name("kipam_node_api_requests_total")
            .help("Requests kipam-node sent to the API server, by verb and resource")
            .labelNames("verb", "resource")
            .register(registry);
  }

  @Override
  public void after(
      HttpRequest request,
      HttpResponse<?> response,
      AsyncBody.Consumer<List<ByteBuffer>> consumer) {
    Kind kind = kind(request.method(), request.uri());
    requests.labelValues(kind.verb(), kind.resource()).inc();
  }

  /** A request as the API server's metrics name it: its verb and resource (with subresource). */
  record Kind(String verb, String resource) {}

  /** The verb and resource of a request for {@code uri} with HTTP {@code method}. */
  static Kind kind(String method, URI uri) {
    String[] parts = uri.getPath().replaceAll("^/+|/+$", "").split("/");
    // /api/v1/... or /apis/<group>/<version>/...
    int at = parts.length > 0 && parts[0].equals("api") ? 2 : 3;
    if (at < parts.length && parts[at].equals("namespaces") && parts.length > at + 2) {
      at += 2; // a namespaced resource, not the namespaces themselves
    }
    if (at >= parts.length) {
      return new Kind(method.toLowerCase(java.util.Locale.ROOT), "other");
    }
    String resource = parts[at];
    boolean named = parts.length > at + 1;
    if (parts.length > at + 2) {
      resource += "/" + parts[at + 2];
    }
    String query = uri.getRawQuery() == null ? "" : uri.getRawQuery();
    String verb =
        switch (method) {
          case "GET" ->
              query.matches("(^|.*&)watch=(true|1)(&.*|$)") ? "watch" : named ? "get" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> named ? "delete" : "deletecollection";
          default -> method.toLowerCase(java.util.Locale.ROOT);
        };
    return new Kind(verb, resource);
  }
}
