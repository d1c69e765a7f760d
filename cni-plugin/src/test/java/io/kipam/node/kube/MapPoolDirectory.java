package io.kipam.node.kube;

import io.kipam.api.net.IpFamily;
import io.kipam.node.alloc.PoolView;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link PoolDirectory} over maps a test fills: the pools by name and each namespace's
 * annotations. Whether a pool may be used, and with which counts, is the subclass's {@link #pool}.
 */
public abstract class MapPoolDirectory implements PoolDirectory {

  private final Map<String, PoolView> pools;
  private final Map<String, Map<String, String>> namespaceAnnotations;

  protected MapPoolDirectory(
      Map<String, PoolView> pools, Map<String, Map<String, String>> namespaceAnnotations) {
    this.pools = pools;
    this.namespaceAnnotations = namespaceAnnotations;
  }

  @Override
  public Optional<IpFamily> poolFamily(String name) {
    return Optional.ofNullable(pools.get(name)).map(p -> p.layout().family());
  }

  @Override
  public Optional<String> poolNetwork(String name) {
    return Optional.ofNullable(pools.get(name)).map(PoolView::network);
  }

  @Override
  public Optional<String> namespaceAnnotation(String namespace, String key) {
    return Optional.ofNullable(namespaceAnnotations.getOrDefault(namespace, Map.of()).get(key));
  }
}
