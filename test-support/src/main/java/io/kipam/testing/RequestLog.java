package io.kipam.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every request a client sends to the API server, as it leaves: what a piece of kipam costs the API
 * server, request by request, read from the real client talking to a real control plane. Tests of
 * "no read per address" and "consistent reads only" count here.
 */
public final class RequestLog implements Interceptor {

  /** One request: its method and URI. */
  public record Request(String method, URI uri) {

    /** The query, decoded ({@code labelSelector=a=b&limit=500}); empty when there is none. */
    public String query() {
      String raw = uri.getRawQuery();
      return raw == null ? "" : URLDecoder.decode(raw, StandardCharsets.UTF_8);
    }

    /** Whether it opens a watch. */
    public boolean watch() {
      return Arrays.asList(query().split("&")).contains("watch=true");
    }

    /**
     * The resource ({@code pods}, {@code ipaddresses}), with its subresource ({@code
     * ipblocks/status}).
     */
    public String resource() {
      String[] parts = uri.getRawPath().replaceAll("^/+|/+$", "").split("/");
      int at = parts.length > 0 && parts[0].equals("api") ? 2 : 3;
      if (at < parts.length && parts[at].equals("namespaces") && parts.length > at + 2) {
        at += 2;
      }
      if (at >= parts.length) {
        return "other";
      }
      return parts.length > at + 2 ? parts[at] + "/" + parts[at + 2] : parts[at];
    }

    /** GET of one object, LIST, WATCH, or the method ({@code POST}, {@code PATCH}, …). */
    public String verb() {
      if (!method.equals("GET")) {
        return method;
      }
      if (watch()) {
        return "WATCH";
      }
      String[] parts = uri.getRawPath().replaceAll("^/+|/+$", "").split("/");
      int at = parts.length > 0 && parts[0].equals("api") ? 2 : 3;
      if (at < parts.length && parts[at].equals("namespaces") && parts.length > at + 2) {
        at += 2;
      }
      return parts.length > at + 1 ? "GET" : "LIST";
    }

    /** {@code VERB resource}, e.g. {@code PATCH ipblocks/status}. */
    @Override
    public String toString() {
      return verb() + " " + resource();
    }
  }

  private final List<Request> requests = Collections.synchronizedList(new ArrayList<>());

  /** A client of {@code config} whose every request is logged here. */
  public KubernetesClient client(Config config) {
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("request-log", this))
        .build();
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    requests.add(new Request(request.method(), request.uri()));
  }

  /** The requests logged since the last take, in order; the log starts again empty. */
  public List<Request> take() {
    synchronized (requests) {
      List<Request> taken = List.copyOf(requests);
      requests.clear();
      return taken;
    }
  }

  /** How many of {@code requests} each {@code VERB resource} made, sorted. */
  public static Map<String, Integer> counts(List<Request> requests) {
    Map<String, Integer> counts = new TreeMap<>();
    requests.forEach(r -> counts.merge(r.toString(), 1, Integer::sum));
    return counts;
  }
}
