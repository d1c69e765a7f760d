package io.kipam.operator.audit;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@link OrphanRules.Facts} read from the API server with GETs (consistent reads, never a cache).
 * Pods are read for every question. Blocks, Nodes and pools are few (bounded by the cluster's size,
 * not by its pods), so within one audit each is read once and remembered; {@link #uncached} answers
 * every question afresh, for the read just before a delete.
 */
public final class ClusterFacts implements OrphanRules.Facts {

  private final KubernetesClient client;
  private final Map<String, Boolean> blocks;
  private final Map<String, Boolean> nodes;
  private final Map<String, Optional<IPPool>> pools = new HashMap<>();

  private ClusterFacts(KubernetesClient client, boolean remember) {
    this.client = client;
    this.blocks = remember ? new HashMap<>() : null;
    this.nodes = remember ? new HashMap<>() : null;
  }

  /** For one audit: blocks and Nodes remembered until it ends. */
  public static ClusterFacts forOneAudit(KubernetesClient client) {
    return new ClusterFacts(client, true);
  }

  public static ClusterFacts uncached(KubernetesClient client) {
    return new ClusterFacts(client, false);
  }

  /** The IPPool {@code name}, read once per audit (pools are few). */
  public Optional<IPPool> pool(String name) {
    return pools.computeIfAbsent(
        name, n -> Optional.ofNullable(client.resources(IPPool.class).withName(n).get()));
  }

  @Override
  public Optional<String> podUid(String namespace, String name) {
    Pod pod = client.pods().inNamespace(namespace).withName(name).get();
    return Optional.ofNullable(pod).map(p -> p.getMetadata().getUid());
  }

  @Override
  public boolean blockExists(String name) {
    if (blocks == null) {
      return client.resources(IPBlock.class).withName(name).get() != null;
    }
    return blocks.computeIfAbsent(
        name, n -> client.resources(IPBlock.class).withName(n).get() != null);
  }

  @Override
  public boolean nodeExists(String name) {
    if (nodes == null) {
      return client.nodes().withName(name).get() != null;
    }
    return nodes.computeIfAbsent(name, n -> client.nodes().withName(n).get() != null);
  }
}
