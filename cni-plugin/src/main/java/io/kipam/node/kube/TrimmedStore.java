package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;

/**
 * An informer's cache without the objects' managed fields (the API server's record of who set which
 * field, often larger than the rest), which kipam-node never reads: a node's memory must not grow
 * with who writes its objects. Pods and the Node are read as {@link PodSummary} and {@link
 * NodeSummary} besides, without the fields kipam-node does not read. The object is trimmed as it is
 * stored, before any handler sees it, so a handler reads what a later lookup will.
 */
final class TrimmedStore<T extends HasMetadata> extends BasicItemStore<T> {

  private TrimmedStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  /** Objects without their managed fields. */
  static <T extends HasMetadata> TrimmedStore<T> withoutManagedFields() {
    return new TrimmedStore<>();
  }

  @Override
  public T put(String key, T object) {
    if (object.getMetadata() != null) {
      object.getMetadata().setManagedFields(null);
    }
    return super.put(key, object);
  }
}
