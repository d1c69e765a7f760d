package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * kipam-operator's one cache per kind (design §6): pools (the IPPool controller's informer), blocks
 * (the IPBlock controller's informer) and Nodes, trimmed by {@link NodeMetadata} (an informer of
 * the IPBlock controller). Every other reader, a controller's event sources for a kind it does not
 * hold as well as the capacity publisher, the claim sweep and the admission webhook, reads them
 * here and keeps no informer of its own. Until each owner's informer has synced, {@link #synced} is
 * false and nothing should be decided on them.
 */
public final class ControllerCaches {

  /**
   * Objects per page of the informers' lists. With a page size they are consistent reads; without
   * one, an informer's first list is at resourceVersion=0, which a lagging watch cache may answer
   * without the newest objects.
   */
  public static final long LIST_PAGE = 500;

  /** The blocks' index by the pool they name ({@link Blocks#poolOf}). */
  public static final String BLOCKS_BY_POOL = "kipam-block-by-pool";

  private final SharedKind<IPPool> pools = new SharedKind<>(IPPool.class);
  private final SharedKind<IPBlock> blocks = new SharedKind<>(IPBlock.class);
  private final SharedKind<Node> nodes = new SharedKind<>(Node.class);

  public SharedKind<IPPool> poolKind() {
    return pools;
  }

  public SharedKind<IPBlock> blockKind() {
    return blocks;
  }

  /** Nodes as {@link NodeMetadata} keeps them. */
  public SharedKind<Node> nodeKind() {
    return nodes;
  }

  /** Whether every cache has synced with the API server. */
  public boolean synced() {
    return Stream.of(pools, blocks, nodes).allMatch(SharedKind::synced);
  }

  public List<IPPool> pools() {
    return pools.list();
  }

  public Optional<IPPool> pool(String name) {
    return pools.get(name);
  }

  public List<IPBlock> blocks() {
    return blocks.list();
  }

  public Optional<IPBlock> block(String name) {
    return blocks.get(name);
  }

  /** The cached blocks that name {@code pool}. */
  public List<IPBlock> blocksOf(String pool) {
    return blocks.byIndex(BLOCKS_BY_POOL, pool);
  }

  public List<Node> nodes() {
    return nodes.list();
  }
}
