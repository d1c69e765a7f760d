package io.kipam.node;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kipam-node's settings, from its environment (the DaemonSet sets them). Every problem is reported
 * at once, naming the variable.
 *
 * <ul>
 *   <li>{@code NODE_NAME} (required): this node's name, from the downward API.
 *   <li>{@code KIPAM_SOCKET}: the unix socket for the CNI executable; default {@code
 *       /run/kipam/kipam.sock}.
 *   <li>{@code KIPAM_STATE_DIR}: where the node lock lives; default {@code /var/lib/kipam}.
 *   <li>{@code KUBECONFIG}: a kubeconfig file; default the pod's service account.
 *   <li>{@code KIPAM_GC_GRACE_SECONDS}: how old an allocation must be before CNI GC may release it;
 *       default 60.
 *   <li>{@code KIPAM_SETTLE_SECONDS}: how long an address whose write had an unknown outcome stays
 *       taken before a fresh read settles it; default 30 (three times the client's request timeout,
 *       so that a write still in flight has landed).
 *   <li>{@code KIPAM_API_QPS}, {@code KIPAM_API_BURST}: the daemon's API write rate; default 50 and
 *       250. Deliberate numbers instead of a client's defaults (5/10 would make 110 pods starting
 *       on one node wait some 20 seconds for their addresses): the burst lets a new node's first
 *       pods through at once (kubelet's max-pods is 110 by default, 250 on large nodes, plus a few
 *       block claims), and the rate caps what one node can ask of the API server after that.
 *   <li>{@code KIPAM_BLOCK_STATUS_SECONDS}: at most one write of a block's {@code status.allocated}
 *       per this many seconds; default 2, at least 1. With thousands of nodes most blocks change
 *       seldom and are written within a second of a change anyway; the period bounds what a busy
 *       node writes, and with kipam-operator's 2 s keeps a pool's counts within seconds of the
 *       truth (docs/benchmarks.md, "Scale").
 *   <li>{@code KIPAM_RELEASE_ABANDON_SECONDS}: how long a block stays closed after its Ready answer
 *       when kipam-operator does not come back to the round; then the answer becomes Refused and
 *       the block opens again. Default 300, at least 1.
 *   <li>{@code KIPAM_SHARED_SLOTS}: {@code true} lets the daemon claim a slot Shared from birth
 *       when its pool has fewer unclaimed slots than {@code status.nodes} (docs/shared-slots.md);
 *       default {@code false}. Sub-claims in Shared slots other daemons made are used either way.
 *   <li>{@code KIPAM_ORPHAN_GRACE_SECONDS}: the node's own orphan audit releases an address whose
 *       pod its pod watch has not shown once the IPAddress is this old and a fresh read finds the
 *       pod gone (at most one read per address per grace); default 60, at least 1.
 *   <li>{@code KIPAM_PROBE_ADDRESS}: {@code host:port} (an IPv6 host in brackets) on which {@code
 *       /healthz}, {@code /readyz} and {@code /metrics} are served over TCP as well, for kubelet's
 *       probes and Prometheus; never CNI calls, which stay on the root-only socket. Default: none.
 *   <li>{@code KIPAM_REHEARSAL_CALLS}: how many calls kipam-node makes to itself before it is
 *       Ready, so that a new node's first pods meet compiled code ({@link Rehearsal}); default 0,
 *       none: measured from the process's start, 600 calls moved Ready later by more than they
 *       saved the first 200 pods (docs/benchmarks.md). None reaches the API server.
 * </ul>
 */
public record NodeSettings(
    String node,
    Path socket,
    Path stateDir,
    Optional<Path> kubeconfig,
    Duration gcGrace,
    Duration settleAfter,
    double apiQps,
    int apiBurst,
    Duration blockStatusPeriod,
    Duration releaseAbandonAfter,
    boolean sharedSlots,
    Optional<InetSocketAddress> probeAddress,
    Duration orphanGrace,
    int rehearsalCalls) {

  /** Calls kipam-node makes to itself before Ready unless {@code KIPAM_REHEARSAL_CALLS} says. */
  public static final int DEFAULT_REHEARSAL_CALLS = 0;

  public static NodeSettings fromEnvironment(Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    String node = env.get("NODE_NAME");
    if (node == null || node.isBlank()) {
      problems.add("NODE_NAME is not set: set it from the downward API (spec.nodeName)");
    }
    Duration grace = seconds(env, "KIPAM_GC_GRACE_SECONDS", 60, problems);
    Duration settle = seconds(env, "KIPAM_SETTLE_SECONDS", 30, problems);
    double qps = number(env, "KIPAM_API_QPS", 50, problems);
    int burst = (int) number(env, "KIPAM_API_BURST", 250, problems);
    Duration blockStatus = seconds(env, "KIPAM_BLOCK_STATUS_SECONDS", 2, problems);
    if (blockStatus.isZero()) {
      problems.add("KIPAM_BLOCK_STATUS_SECONDS must be at least 1, not 0");
    }
    Duration abandon = seconds(env, "KIPAM_RELEASE_ABANDON_SECONDS", 300, problems);
    if (abandon.isZero()) {
      problems.add("KIPAM_RELEASE_ABANDON_SECONDS must be at least 1, not 0");
    }
    Duration orphanGrace = seconds(env, "KIPAM_ORPHAN_GRACE_SECONDS", 60, problems);
    if (orphanGrace.isZero()) {
      problems.add("KIPAM_ORPHAN_GRACE_SECONDS must be at least 1, not 0");
    }
    int rehearsal = count(env, "KIPAM_REHEARSAL_CALLS", DEFAULT_REHEARSAL_CALLS, problems);
    String shared = env.getOrDefault("KIPAM_SHARED_SLOTS", "false");
    if (!shared.equals("true") && !shared.equals("false")) {
      problems.add("KIPAM_SHARED_SLOTS must be true or false, not " + shared);
    }
    Optional<InetSocketAddress> probes =
        Optional.ofNullable(env.get("KIPAM_PROBE_ADDRESS"))
            .filter(a -> !a.isBlank())
            .flatMap(a -> probeAddress(a, problems));
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return new NodeSettings(
        node,
        Path.of(env.getOrDefault("KIPAM_SOCKET", "/run/kipam/kipam.sock")),
        Path.of(env.getOrDefault("KIPAM_STATE_DIR", "/var/lib/kipam")),
        Optional.ofNullable(env.get("KUBECONFIG")).map(Path::of),
        grace,
        settle,
        qps,
        burst,
        blockStatus,
        abandon,
        shared.equals("true"),
        probes,
        orphanGrace,
        rehearsal);
  }

  /** {@code host:port}, the host a name or an address, an IPv6 one in brackets. */
  private static Optional<InetSocketAddress> probeAddress(String text, List<String> problems) {
    int colon = text.lastIndexOf(':');
    String host = colon > 0 ? text.substring(0, colon) : "";
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port = -1;
    try {
      port = colon > 0 ? Integer.parseInt(text.substring(colon + 1)) : -1;
    } catch (NumberFormatException e) {
      // reported below
    }
    if (host.isEmpty() || host.contains("[") || host.contains("]") || port < 1 || port > 65535) {
      problems.add(
          "KIPAM_PROBE_ADDRESS must be host:port with a port from 1 to 65535 (e.g."
              + " 127.0.0.1:9880 or [::1]:9880), not "
              + text);
      return Optional.empty();
    }
    return Optional.of(InetSocketAddress.createUnresolved(host, port));
  }

  private static Duration seconds(
      Map<String, String> env, String name, long fallback, List<String> problems) {
    String text = env.get(name);
    if (text == null) {
      return Duration.ofSeconds(fallback);
    }
    try {
      long value = Long.parseLong(text);
      if (value >= 0) {
        return Duration.ofSeconds(value);
      }
      problems.add(name + " must not be negative, not " + text);
    } catch (NumberFormatException e) {
      problems.add(name + " must be a whole number of seconds, not " + text);
    }
    return Duration.ofSeconds(fallback);
  }

  private static double number(
      Map<String, String> env, String name, double fallback, List<String> problems) {
    String text = env.get(name);
    if (text == null) {
      return fallback;
    }
    try {
      double value = Double.parseDouble(text);
      if (value >= 1) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(name + " must be a number of at least 1, not " + text);
    return fallback;
  }

  private static int count(
      Map<String, String> env, String name, int fallback, List<String> problems) {
    String text = env.get(name);
    if (text == null) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(text.strip());
      if (value >= 0) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(name + " must be a whole number of at least 0, not " + text);
    return fallback;
  }
}
