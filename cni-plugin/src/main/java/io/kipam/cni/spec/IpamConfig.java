package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code ipam} section of a network configuration for kipam: {@code "type": "kipam"}, the
 * {@code pools} to allocate from (1 to {@link #MAX_POOLS} distinct IPPool names; the daemon groups
 * them by IP family, each family's in order of preference, and gives a dual-stack attachment when
 * both families are named), optionally the {@code socket} of {@code kipam-node}, and {@code
 * statefulSetClaims} (false when absent): kipam-node makes an IPAMClaim {@code <pod>.<network>},
 * owned by the StatefulSet, for each StatefulSet pod of the network, so the pod keeps its addresses
 * through re-creation, rescheduling and rolling updates. kipam owns this schema, so an unknown key
 * in it is reported (code 2) rather than ignored: a host-local setting copied here would otherwise
 * silently do nothing.
 */
public record IpamConfig(List<String> pools, Optional<String> socket, boolean statefulSetClaims) {

  public static final String TYPE = "kipam";
  public static final int MAX_POOLS = 8;

  /** sun_path holds 108 bytes including the terminating NUL. */
  static final int MAX_SOCKET_PATH = 107;

  /** The key of the StatefulSet option. */
  public static final String STATEFUL_SET_CLAIMS = "statefulSetClaims";

  private static final Set<String> KEYS = Set.of("type", "pools", "socket", STATEFUL_SET_CLAIMS);

  /** Without the StatefulSet option. */
  public IpamConfig(List<String> pools, Optional<String> socket) {
    this(pools, socket, false);
  }

  public IpamConfig {
    pools = List.copyOf(pools);
    if (pools.isEmpty() || pools.size() > MAX_POOLS) {
      throw new IllegalArgumentException(
          "kipam takes 1 to " + MAX_POOLS + " pools, not " + pools.size());
    }
    pools.forEach(ResourceNames::validatePoolName);
    if (new HashSet<>(pools).size() != pools.size()) {
      throw new IllegalArgumentException("pools " + pools + " name a pool twice");
    }
  }

  /** Reads the {@code ipam} object at {@code path}; empty if it is invalid (see problems). */
  static Optional<IpamConfig> parse(JsonNode ipam, String path, JsonProblems problems) {
    problems
        .string(ipam, path, "type", true)
        .filter(type -> !type.equals(TYPE))
        .ifPresent(
            type ->
                problems.add(
                    JsonProblems.path(path, "type"),
                    "is "
                        + Json.quote(type)
                        + " but this plugin is "
                        + Json.quote(TYPE)
                        + "; the runtime called the wrong IPAM plugin"));
    int before = problems.count();
    List<String> pools = pools(ipam, path, problems);
    Optional<String> socket = problems.string(ipam, path, "socket", false);
    socket.ifPresent(s -> socketProblem(s, JsonProblems.path(path, "socket"), problems));
    boolean statefulSets = problems.bool(ipam, path, STATEFUL_SET_CLAIMS).orElse(false);
    for (Iterator<String> keys = ipam.fieldNames(); keys.hasNext(); ) {
      String key = keys.next();
      if (!KEYS.contains(key)) {
        // The key only: a stray value could be a credential pasted into the wrong place.
        problems.unsupported(
            JsonProblems.path(path, key),
            "is not a kipam setting; kipam's ipam section takes type, pools, socket and "
                + STATEFUL_SET_CLAIMS);
      }
    }
    if (problems.count() != before || pools.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new IpamConfig(pools, socket, statefulSets));
  }

  private static List<String> pools(JsonNode ipam, String path, JsonProblems problems) {
    String poolsPath = JsonProblems.path(path, "pools");
    Optional<List<JsonNode>> elements = problems.array(ipam, path, "pools", true);
    if (elements.isEmpty()) {
      return List.of();
    }
    if (elements.get().isEmpty() || elements.get().size() > MAX_POOLS) {
      problems.add(
          poolsPath,
          "has "
              + elements.get().size()
              + " pools; name 1 to "
              + MAX_POOLS
              + ": per IP family in order of preference (the next serves when one is exhausted),"
              + " both families for dual-stack");
      return List.of();
    }
    List<String> pools = new ArrayList<>();
    for (int i = 0; i < elements.get().size(); i++) {
      JsonNode element = elements.get().get(i);
      String at = JsonProblems.index(poolsPath, i);
      if (!element.isTextual()) {
        problems.add(at, "must be a pool name, not " + JsonProblems.typeOf(element));
        continue;
      }
      String pool = element.textValue();
      if (pool.isEmpty()) {
        problems.add(at, "is empty; name an IPPool");
        continue;
      }
      try {
        ResourceNames.validatePoolName(pool);
      } catch (IllegalArgumentException e) {
        problems.add(at, "is invalid: " + e.getMessage());
        continue;
      }
      if (pools.contains(pool)) {
        problems.add(
            at, "names pool " + Json.quote(pool) + " again; each pool may be named only once");
        continue;
      }
      pools.add(pool);
    }
    return pools;
  }

  private static void socketProblem(String socket, String path, JsonProblems problems) {
    if (!socket.startsWith("/")) {
      problems.add(path, Json.quote(socket) + " must be an absolute path");
    } else if (socket.indexOf('\0') >= 0) {
      problems.add(path, "must not contain a NUL character");
    } else if (socket.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
      problems.add(
          path,
          Json.quote(socket)
              + " is longer than the "
              + MAX_SOCKET_PATH
              + " bytes a unix socket path may have");
    }
  }
}
