package io.kipam.operator;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the watch requests kipam-operator's clients send, by resource ({@code nodes}, {@code
 * ippools.kipam.io}): what its informers really open, as the API server receives it. An informer
 * opens one watch when it starts and another each time the API server ends one, so right after the
 * start the count of a resource is the number of informers of it (design §6: one per kind).
 */
final class WatchCount implements Interceptor {

  static final String NAME = "kipam-watch-count";

  private final Map<String, AtomicInteger> opened = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> staleable = new ConcurrentHashMap<>();

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    URI uri = request.uri();
    String query = uri.getRawQuery();
    List<String> params = query == null ? List.of() : Arrays.asList(query.split("&"));
    if (params.contains("watch=true")) {
      opened
          .computeIfAbsent(resource(uri.getRawPath()), r -> new AtomicInteger())
          .incrementAndGet();
    } else if ("GET".equals(request.method()) && params.contains("resourceVersion=0")) {
      staleable
          .computeIfAbsent(resource(uri.getRawPath()), r -> new AtomicInteger())
          .incrementAndGet();
    }
  }

  /**
   * The reads at {@code resourceVersion=0} so far, by resource: answered from a watch cache at any
   * staleness, so an informer's first list there may lack the newest objects.
   */
  Map<String, Integer> staleableReads() {
    Map<String, Integer> copy = new TreeMap<>();
    staleable.forEach((resource, count) -> copy.put(resource, count.get()));
    return copy;
  }

  /** The watches opened so far, by resource. */
  Map<String, Integer> opened() {
    Map<String, Integer> copy = new TreeMap<>();
    opened.forEach((resource, count) -> copy.put(resource, count.get()));
    return copy;
  }

  /**
   * {@code resource[.group]} of a path {@code /api/v1/[namespaces/<ns>/]<resource>} or {@code
   * /apis/<group>/<version>/[namespaces/<ns>/]<resource>}.
   */
  static String resource(String path) {
    List<String> parts = Arrays.stream(path.split("/")).filter(p -> !p.isEmpty()).toList();
    boolean core = !parts.isEmpty() && parts.get(0).equals("api");
    int first = core ? 2 : 3;
    if (parts.size() < first + 1) {
      return path;
    }
    List<String> rest = parts.subList(first, parts.size());
    if (rest.size() > 2 && rest.get(0).equals("namespaces")) {
      rest = rest.subList(2, rest.size());
    }
    return core ? rest.get(0) : rest.get(0) + "." + parts.get(1);
  }
}
