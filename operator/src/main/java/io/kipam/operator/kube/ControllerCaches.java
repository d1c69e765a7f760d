package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.stream.Stream;

/**
 * The controllers' caches of pools, blocks and Nodes, for the parts of kipam-operator that read
 * them outside a reconcile (the capacity publisher), so that those keep no informers of their own
 * (design §6: the operator's memory follows what it must hold, once). Each controller hands over
 * its cache as it prepares its event sources; until then, and until every one of them has synced,
 * {@link #synced} is false and nothing should be decided on them.
 */
public final class ControllerCaches {

  private volatile IndexerResourceCache<IPPool> pools;
  private volatile IndexerResourceCache<IPBlock> blocks;
  private volatile IndexerResourceCache<Node> nodes;

  public void pools(IndexerResourceCache<IPPool> cache) {
    this.pools = cache;
  }

  public void blocks(IndexerResourceCache<IPBlock> cache) {
    this.blocks = cache;
  }

  /** Nodes as {@link NodeMetadata} keeps them. */
  public void nodes(IndexerResourceCache<Node> cache) {
    this.nodes = cache;
  }

  /** Whether every cache was handed over and has synced with the API server. */
  public boolean synced() {
    return Stream.of(pools, blocks, nodes).allMatch(ControllerCaches::synced);
  }

  private static boolean synced(IndexerResourceCache<? extends HasMetadata> cache) {
    if (cache == null) {
      return false;
    }
    if (cache instanceof InformerWrappingEventSourceHealthIndicator<?> informers) {
      var indicators = informers.informerHealthIndicators().values();
      return !indicators.isEmpty() && indicators.stream().allMatch(i -> i.hasSynced());
    }
    return false;
  }

  public List<IPPool> pools() {
    return pools.list().toList();
  }

  public List<IPBlock> blocks() {
    return blocks.list().toList();
  }

  public List<Node> nodes() {
    return nodes.list().toList();
  }
}
