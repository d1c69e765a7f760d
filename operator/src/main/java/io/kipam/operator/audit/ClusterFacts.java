package io.kipam.operator.audit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.kube.Pages;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * {@link OrphanRules.Facts} read from the API server (consistent reads, never a cache).
 *
 * <p>For the periodic audit ({@link #forOneAudit}), IPBlocks and Nodes are listed once, page by
 * page, when first asked about, and only their names kept: a few requests per audit however many
 * addresses name them, never a GET per address (design §6). Pods are read only for addresses of a
 * Node that is gone: a node's daemon audits its own addresses against its pod watch. {@link
 * #forCheck} (the {@code check} command) reads the Pod of every address, and {@link #uncached}
 * answers every question with a GET of its own, for the read just before a delete, under the same
 * rule as the audit ({@link #uncachedEveryPod}: under check's rule).
 *
 * <p>In every mode, the Pods of a Node that is gone are listed once (the Pods bound to it, page by
 * page, a consistent read) and looked up there: a Pod never moves to another Node and a UID never
 * comes back, so a Pod missing from that list is gone for good, and the read stays true for as long
 * as the facts are used. A node that vanished with 30 pods costs one list, not 30 GETs. {@link
 * #forRemovals} also asks about each Node once, for the removals of one audit pass.
 */
public final class ClusterFacts implements OrphanRules.Facts {

  private final KubernetesClient client;
  private final boolean listed;
  private final boolean allPods;
  private Set<String> blocks;
  private Set<String> nodes;
  private final Map<String, Optional<IPPool>> pools = new HashMap<>();
  private final Map<String, Map<String, String>> podsOfGoneNodes = new HashMap<>();
  private final Map<String, Boolean> nodesRead;

  private ClusterFacts(
      KubernetesClient client, boolean listed, boolean allPods, boolean nodesOnce) {
    this.client = client;
    this.listed = listed;
    this.allPods = allPods;
    this.nodesRead = nodesOnce ? new HashMap<>() : null;
  }

  private ClusterFacts(KubernetesClient client, boolean listed, boolean allPods) {
    this(client, listed, allPods, false);
  }

  /**
   * For the removals of one audit pass, read when the first removal needs them, just before its
   * writes: each Node read once (a GET), the Pods of a gone Node listed once, every IPBlock read
   * afresh. What a Node that is gone holds then costs a few reads, not one per address.
   */
  public static ClusterFacts forRemovals(KubernetesClient client) {
    return new ClusterFacts(client, false, false, true);
  }

  /** For one audit: block and Node names listed once; Pods of gone Nodes only. */
  public static ClusterFacts forOneAudit(KubernetesClient client) {
    return new ClusterFacts(client, true, false);
  }

  /** For one {@code check}: as {@link #forOneAudit}, but the Pod of every address is read. */
  public static ClusterFacts forCheck(KubernetesClient client) {
    return new ClusterFacts(client, true, true);
  }

  /** Every question read afresh, under the audit's rule for Pods. */
  public static ClusterFacts uncached(KubernetesClient client) {
    return new ClusterFacts(client, false, false);
  }

  /**
   * Every question read afresh, and the Pod of every address read, as {@code check} reads them: for
   * the read just before {@code kubectl kipam release} removes an orphan a check reported.
   */
  public static ClusterFacts uncachedEveryPod(KubernetesClient client) {
    return new ClusterFacts(client, false, true);
  }

  /** The IPPool {@code name}, read once per audit (pools are few). */
  public Optional<IPPool> pool(String name) {
    return pools.computeIfAbsent(
        name, n -> Optional.ofNullable(client.resources(IPPool.class).withName(n).get()));
  }

  @Override
  public Optional<String> podUid(String node, String namespace, String name) {
    if (node != null && !nodeExists(node)) {
      return Optional.ofNullable(podsOn(node).get(namespace + "/" + name));
    }
    Pod pod = client.pods().inNamespace(namespace).withName(name).get();
    return Optional.ofNullable(pod).map(p -> p.getMetadata().getUid());
  }

  /**
   * The Pods bound to the gone Node {@code node}, {@code namespace/name} to UID: one paged list
   * (field selector {@code spec.nodeName}), made the first time they are asked about.
   */
  private Map<String, String> podsOn(String node) {
    return podsOfGoneNodes.computeIfAbsent(
        node,
        n -> {
          Map<String, String> pods = new HashMap<>();
          Pages.each(
              options -> client.pods().inAnyNamespace().withField("spec.nodeName", n).list(options),
              pod ->
                  pods.put(
                      pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(),
                      pod.getMetadata().getUid()));
          return pods;
        });
  }

  @Override
  public boolean checksPodsOn(String node) {
    return allPods || node == null || !nodeExists(node);
  }

  @Override
  public boolean blockExists(String name) {
    if (!listed) {
      return client.resources(IPBlock.class).withName(name).get() != null;
    }
    if (blocks == null) {
      blocks = names(options -> client.resources(IPBlock.class).list(options));
    }
    return blocks.contains(name);
  }

  @Override
  public boolean nodeExists(String name) {
    if (nodesRead != null) {
      return nodesRead.computeIfAbsent(name, n -> client.nodes().withName(n).get() != null);
    }
    if (!listed) {
      return client.nodes().withName(name).get() != null;
    }
    if (nodes == null) {
      nodes = names(options -> client.nodes().list(options));
    }
    return nodes.contains(name);
  }

  /** The names of every object of a kind, read page by page. */
  private static <T extends HasMetadata> Set<String> names(
      Function<ListOptions, KubernetesResourceList<T>> list) {
    Set<String> names = new HashSet<>();
    Pages.each(list, o -> names.add(o.getMetadata().getName()));
    return names;
  }
}
