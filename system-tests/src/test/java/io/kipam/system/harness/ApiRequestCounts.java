package io.kipam.system.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Requests kube-apiserver served for kipam's resources, read from its own {@code
 * apiserver_request_total}: what a benchmark counts, before and after a workload, to tell API
 * writes per allocation.
 */
public final class ApiRequestCounts {

  private static final Pattern LINE =
      Pattern.compile("^apiserver_request_total\\{([^}]*)\\} ([0-9.e+]+)$", Pattern.MULTILINE);

  /** The requests of one kind: resource, subresource (empty for none) and verb. */
  public record Kind(String resource, String subresource, String verb) {
    @Override
    public String toString() {
      return verb + " " + resource + (subresource.isEmpty() ? "" : "/" + subresource);
    }
  }

  private final Map<Kind, Double> counts;

  private ApiRequestCounts(Map<Kind, Double> counts) {
    this.counts = counts;
  }

  /** The counts now, for the {@code kipam.io} group. */
  public static ApiRequestCounts read(KubernetesClient client) {
    return read(client, "kipam.io");
  }

  /** The counts now, for API group {@code group} (empty: the core group, Nodes and Pods). */
  public static ApiRequestCounts read(KubernetesClient client, String group) {
    return read(client, group::equals);
  }

  /** The counts now, for every API group. */
  public static ApiRequestCounts readAll(KubernetesClient client) {
    return read(client, group -> true);
  }

  private static ApiRequestCounts read(KubernetesClient client, Predicate<String> group) {
    Map<Kind, Double> counts = new HashMap<>();
    Matcher m = LINE.matcher(client.raw("/metrics"));
    while (m.find()) {
      String labels = m.group(1);
      if (!group.test(label(labels, "group"))) {
        continue;
      }
      Kind kind =
          new Kind(label(labels, "resource"), label(labels, "subresource"), label(labels, "verb"));
      counts.merge(kind, Double.parseDouble(m.group(2)), Double::sum);
    }
    return new ApiRequestCounts(counts);
  }

  private static String label(String labels, String name) {
    Matcher m = Pattern.compile("(?:^|,)" + name + "=\"([^\"]*)\"").matcher(labels);
    return m.find() ? m.group(1) : "";
  }

  /** Requests since {@code before}, per kind, only kinds that changed. */
  public Map<Kind, Double> since(ApiRequestCounts before) {
    Map<Kind, Double> delta = new HashMap<>();
    counts.forEach(
        (kind, n) -> {
          double d = n - before.counts.getOrDefault(kind, 0.0);
          if (d > 0) {
            delta.put(kind, d);
          }
        });
    return delta;
  }

  /**
   * Requests since {@code before} by verb, only verbs that changed; watches and CONNECTs left out
   * (they stay open rather than complete).
   */
  public Map<String, Double> byVerbSince(ApiRequestCounts before) {
    Map<String, Double> byVerb = new TreeMap<>();
    since(before)
        .forEach(
            (kind, n) -> {
              if (!kind.verb().equals("WATCH") && !kind.verb().equals("CONNECT")) {
                byVerb.merge(kind.verb(), n, Double::sum);
              }
            });
    return byVerb;
  }

  /** Whether requests of {@code verb} write: create, update, patch, apply, delete. */
  public static boolean isWrite(String verb) {
    return verb.matches("POST|PUT|PATCH|DELETE|APPLY");
  }

  /** Write requests (create, update, patch, delete) among {@code delta}. */
  public static double writes(Map<Kind, Double> delta) {
    return delta.entrySet().stream()
        .filter(e -> isWrite(e.getKey().verb()))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }
}
