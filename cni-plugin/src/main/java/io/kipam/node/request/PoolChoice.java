package io.kipam.node.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.IpFamily;
import io.kipam.api.net.ResourceNames;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.alloc.Refusal;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PoolDirectory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which pools serve an attachment, family by family, each family's in order of preference (the next
 * serves when one is exhausted). The network configuration's {@code ipam.pools} decide which
 * families the attachment gets; for each of them the pools come from the most specific of: the
 * pod's annotations, its namespace's annotations, the configuration. At each of the two annotated
 * levels, {@code kipam.io/ipv4-pools} and {@code kipam.io/ipv6-pools} name one family's pools and
 * win over {@code kipam.io/pools}, which may name both. An annotation's value is a JSON list of
 * pool names or the names separated by commas.
 *
 * <p>A pool an annotation names must be usable by the pod, or the ADD is refused naming the
 * annotation: an annotation never reaches a pool the pool's {@code namespaceSelector} or {@code
 * nodeSelector} keeps from the pod. Of the configuration's pools, those the pod may not use are
 * skipped while another of the family is usable.
 */
public final class PoolChoice {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The annotations a Pod or Namespace may carry, most specific first. */
  private static final List<String> ANNOTATIONS =
      List.of(
          ApiConstants.ANNOTATION_IPV4_POOLS,
          ApiConstants.ANNOTATION_IPV6_POOLS,
          ApiConstants.ANNOTATION_POOLS);

  private final PoolDirectory watch;

  public PoolChoice(PoolDirectory watch) {
    this.watch = watch;
  }

  /** One level's annotations: where they are (for messages) and their values. */
  private record Level(String where, Map<String, String> annotations) {}

  /**
   * The pools for each family the configuration asks for, in the configuration's family order.
   *
   * @param configured the configuration's pools, from {@link #configured}
   * @param network the interface's network, from {@link #network}
   */
  public List<List<PoolView>> choose(
      Map<IpFamily, List<PoolView>> configured,
      String namespace,
      NodeWatch.Owner pod,
      String network) {
    Map<IpFamily, List<PoolView>> byFamily = new LinkedHashMap<>(configured);
    Map<IpFamily, Boolean> decided = new LinkedHashMap<>();
    for (Level level : levels(namespace, pod)) {
      Map<IpFamily, List<PoolView>> chosen = chosen(level, namespace, byFamily.keySet(), network);
      for (var entry : chosen.entrySet()) {
        if (decided.putIfAbsent(entry.getKey(), true) == null) {
          byFamily.put(entry.getKey(), entry.getValue());
        }
      }
    }
    return List.copyOf(byFamily.values());
  }

  private List<Level> levels(String namespace, NodeWatch.Owner pod) {
    Map<String, String> onPod = new LinkedHashMap<>();
    Map<String, String> onNamespace = new LinkedHashMap<>();
    for (String key : ANNOTATIONS) {
      pod.annotation(key).ifPresent(v -> onPod.put(key, v));
      watch.namespaceAnnotation(namespace, key).ifPresent(v -> onNamespace.put(key, v));
    }
    return List.of(
        new Level("pod " + namespace + "/" + pod.ref().name(), onPod),
        new Level("namespace " + namespace, onNamespace));
  }

  /**
   * The configuration's pools by family, each family's usable ones in order; a family none of whose
   * pools the pod may use is refused with its first pool's reason.
   */
  public Map<IpFamily, List<PoolView>> configured(List<String> names, String namespace)
      throws NodeWatch.PoolNotUsableException {
    Map<IpFamily, List<PoolView>> usable = new LinkedHashMap<>();
    Map<String, NodeWatch.PoolNotUsableException> refusals = new LinkedHashMap<>();
    Map<String, IpFamily> families = new LinkedHashMap<>();
    for (String name : names) {
      try {
        PoolView pool = watch.pool(name, namespace);
        usable.computeIfAbsent(pool.layout().family(), f -> new ArrayList<>()).add(pool);
      } catch (NodeWatch.PoolNotUsableException e) {
        refusals.put(name, e);
        watch.poolFamily(name).ifPresent(f -> families.put(name, f));
      }
    }
    for (var refused : refusals.entrySet()) {
      IpFamily family = families.get(refused.getKey());
      if (family == null || !usable.containsKey(family)) {
        throw refused.getValue();
      }
    }
    return usable;
  }

  /**
   * The network of the configuration's pools {@code names}: the interface's network. Pools of two
   * networks in one configuration are refused: an interface gets addresses of one network.
   */
  public String network(List<String> names, String configName) {
    Map<String, String> networks = new LinkedHashMap<>();
    for (String name : names) {
      watch.poolNetwork(name).ifPresent(n -> networks.put(name, n));
    }
    var distinct = new LinkedHashSet<>(networks.values());
    if (distinct.size() > 1) {
      List<String> each = new ArrayList<>();
      networks.forEach((pool, n) -> each.add(pool + " (" + PoolView.networkName(n) + ")"));
      throw new Refusal(
          Refusal.Kind.INVALID_CONFIG,
          "network configuration "
              + configName
              + " names pools of different networks: "
              + String.join(", ", each)
              + "; an interface gets addresses of one network",
          "name pools of one spec.network in ipam.pools; nothing was allocated");
    }
    return distinct.isEmpty() ? PoolView.PRIMARY : distinct.iterator().next();
  }

  /**
   * The pools {@code level} chooses for an interface of {@code network}, by family; empty when it
   * names none of that network.
   */
  private Map<IpFamily, List<PoolView>> chosen(
      Level level, String namespace, java.util.Set<IpFamily> families, String network) {
    Map<IpFamily, List<PoolView>> chosen = new LinkedHashMap<>();
    for (String key : ANNOTATIONS) {
      String value = level.annotations().get(key);
      if (value == null) {
        continue;
      }
      Optional<IpFamily> only =
          key.equals(ApiConstants.ANNOTATION_IPV4_POOLS)
              ? Optional.of(IpFamily.V4)
              : key.equals(ApiConstants.ANNOTATION_IPV6_POOLS)
                  ? Optional.of(IpFamily.V6)
                  : Optional.empty();
      Map<IpFamily, List<PoolView>> named = new LinkedHashMap<>();
      for (String name : names(level, key, value)) {
        if (!watch.poolNetwork(name).orElse(network).equals(network)) {
          continue; // a pool of another network: the annotation chooses it for other interfaces
        }
        PoolView pool;
        try {
          pool = watch.pool(name, namespace);
        } catch (NodeWatch.PoolNotUsableException e) {
          throw new Refusal(
              Refusal.Kind.POOL_NOT_AVAILABLE,
              "annotation "
                  + key
                  + " of "
                  + level.where()
                  + " names pool "
                  + name
                  + ": "
                  + e.getMessage(),
              "an annotation chooses among the pools the pod may use; nothing was allocated");
        }
        IpFamily family = pool.layout().family();
        if (only.isPresent() && only.get() != family) {
          throw refused(
              level,
              key,
              "names "
                  + family.displayName()
                  + " pool "
                  + name
                  + " among its "
                  + only.get().displayName()
                  + " pools");
        }
        if (!families.contains(family)) {
          throw refused(
              level,
              key,
              "names "
                  + family.displayName()
                  + " pool "
                  + name
                  + ", but the network configuration asks for no "
                  + family.displayName()
                  + " address");
        }
        named.computeIfAbsent(family, f -> new ArrayList<>()).add(pool);
      }
      // The per-family annotations come first: kipam.io/pools decides only what they leave.
      named.forEach(chosen::putIfAbsent);
    }
    return chosen;
  }

  /** The pool names of an annotation's value: a JSON list or comma-separated names. */
  private static List<String> names(Level level, String key, String value) {
    List<String> names = new ArrayList<>();
    String text = value.trim();
    if (text.startsWith("[")) {
      JsonNode list;
      try {
        list = JSON.readTree(text);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw refused(level, key, "is not a JSON list of pool names: " + quoted(value));
      }
      for (JsonNode element : list) {
        if (!element.isTextual()) {
          throw refused(level, key, "is not a JSON list of pool names: " + quoted(value));
        }
        names.add(element.textValue().trim());
      }
    } else {
      for (String name : text.split(",")) {
        names.add(name.trim());
      }
    }
    LinkedHashSet<String> distinct = new LinkedHashSet<>();
    for (String name : names) {
      try {
        ResourceNames.validatePoolName(name);
      } catch (IllegalArgumentException e) {
        throw refused(
            level, key, "names " + quoted(name) + ", which is no pool name: " + quoted(value));
      }
      if (!distinct.add(name)) {
        throw refused(level, key, "names pool " + name + " twice: " + quoted(value));
      }
    }
    return List.copyOf(distinct);
  }

  private static Refusal refused(Level level, String key, String what) {
    return new Refusal(
        Refusal.Kind.INVALID_CONFIG,
        "annotation " + key + " of " + level.where() + " " + what,
        "write a JSON list of IPPool names or the names separated by commas; nothing was"
            + " allocated");
  }

  private static String quoted(String value) {
    return "'" + value + "'";
  }
}
