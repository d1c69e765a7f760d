package io.kipam.cni.spec;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * CNI_ARGS split into its {@code KEY=VALUE} pairs, in the order given. The keys kipam reads are the
 * pod identity Kubernetes runtimes pass (K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_UID,
 * K8S_POD_INFRA_CONTAINER_ID) and MAC; every other key is kept in {@link #pairs()} for whoever
 * wants it. As the CNI conventions describe, an unknown key is an error unless the caller sets
 * {@code IgnoreUnknown=1} (or {@code true}), which Kubernetes runtimes always do. A key may come
 * more than once with one value (Multus repeats the pod's identity), never with two.
 */
public record CniArgs(Map<String, String> pairs) {

  public static final String IGNORE_UNKNOWN = "IgnoreUnknown";
  public static final String POD_NAMESPACE = "K8S_POD_NAMESPACE";
  public static final String POD_NAME = "K8S_POD_NAME";
  public static final String POD_UID = "K8S_POD_UID";
  public static final String POD_INFRA_CONTAINER_ID = "K8S_POD_INFRA_CONTAINER_ID";
  public static final String MAC = "MAC";

  /** The addresses asked for (comma-separated), as the CNI conventions name the key. */
  public static final String IP = "IP";

  static final Set<String> KNOWN =
      Set.of(IGNORE_UNKNOWN, POD_NAMESPACE, POD_NAME, POD_UID, POD_INFRA_CONTAINER_ID, MAC, IP);

  public static final CniArgs NONE = new CniArgs(Map.of());

  public CniArgs {
    pairs = Collections.unmodifiableMap(new LinkedHashMap<>(pairs));
  }

  public Optional<String> get(String key) {
    return Optional.ofNullable(pairs.get(key));
  }

  public Optional<String> podNamespace() {
    return get(POD_NAMESPACE);
  }

  public Optional<String> podName() {
    return get(POD_NAME);
  }

  public Optional<String> podUid() {
    return get(POD_UID);
  }

  public Optional<String> podInfraContainerId() {
    return get(POD_INFRA_CONTAINER_ID);
  }

  /** True if the caller set IgnoreUnknown to 1 or true. */
  public boolean ignoreUnknown() {
    return get(IGNORE_UNKNOWN).map(CniArgs::truthy).orElse(false);
  }

  /** The pairs whose keys kipam does not read, in the order given. */
  public Map<String, String> unknown() {
    Map<String, String> unknown = new LinkedHashMap<>(pairs);
    unknown.keySet().removeAll(KNOWN);
    return Collections.unmodifiableMap(unknown);
  }

  /**
   * Splits CNI_ARGS, adding a sentence to {@code problems} for each malformed part. Values are
   * never quoted in problems: callers put tokens in CNI_ARGS too.
   */
  static CniArgs parse(String text, List<String> problems) {
    Map<String, String> pairs = new LinkedHashMap<>();
    int index = 0;
    for (String pair : text.split(";", -1)) {
      index++;
      // An empty part (a trailing ';') carries nothing and harms nothing.
      if (pair.isEmpty()) {
        continue;
      }
      int equals = pair.indexOf('=');
      if (equals <= 0) {
        problems.add(
            "CNI_ARGS part "
                + index
                + (equals < 0 ? " has no '='" : " has an empty key")
                + "; write KEY=VALUE pairs separated by ';'");
        continue;
      }
      String key = pair.substring(0, equals);
      String value = pair.substring(equals + 1);
      String earlier = pairs.putIfAbsent(key, value);
      // Multus (v4) appends the runtime's pairs to its own, which carry the same pod identity: a
      // key said twice with one value is one setting. Two values leave it unknown which is meant.
      if (earlier != null && !sameSetting(key, earlier, value)) {
        problems.add(
            "CNI_ARGS sets " + Json.quote(key) + " more than once, to two values; set it once");
      }
    }
    CniArgs args = new CniArgs(pairs);
    String ignore = pairs.get(IGNORE_UNKNOWN);
    if (ignore != null && !truthy(ignore) && !falsy(ignore)) {
      problems.add("CNI_ARGS IgnoreUnknown must be 1, 0, true or false");
    }
    if (!args.ignoreUnknown() && !args.unknown().isEmpty()) {
      problems.add(
          "CNI_ARGS has keys kipam does not know: "
              + String.join(", ", args.unknown().keySet().stream().map(Json::quote).toList())
              + "; remove them or add IgnoreUnknown=1");
    }
    return args;
  }

  /** Two values of {@code key} that say the same: equal, or IgnoreUnknown's true and 1. */
  private static boolean sameSetting(String key, String one, String other) {
    if (one.equals(other)) {
      return true;
    }
    return key.equals(IGNORE_UNKNOWN)
        && ((truthy(one) && truthy(other)) || (falsy(one) && falsy(other)));
  }

  private static boolean truthy(String value) {
    String lower = value.toLowerCase(Locale.ROOT);
    return lower.equals("1") || lower.equals("true");
  }

  private static boolean falsy(String value) {
    String lower = value.toLowerCase(Locale.ROOT);
    return lower.equals("0") || lower.equals("false");
  }
}
