package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tells when an informer's handler has been given every object of the informer's first list.
 * fabric8 completes an informer's start once its cache holds the list, and hands the objects to
 * handlers on another thread a moment later; the ledger must not be marked synced in between, or an
 * address held by an object still on its way would look free (and a block being released, open).
 */
final class FirstList<T extends HasMetadata> {

  private final Set<String> delivered = ConcurrentHashMap.newKeySet();
  private volatile boolean done;

  /** {@code inner}, noting which objects it has been given until {@link #finish}. */
  ResourceEventHandler<T> track(ResourceEventHandler<T> inner) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        try {
          inner.onAdd(obj);
        } finally {
          note(obj);
        }
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        try {
          inner.onUpdate(oldObj, newObj);
        } finally {
          note(newObj);
        }
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        inner.onDelete(obj, deletedFinalStateUnknown);
      }
    };
  }

  private void note(T obj) {
    if (!done) {
      delivered.add(Cache.metaNamespaceKeyFunc(obj));
    }
  }

  /** Whether every object now in {@code informer}'s cache has reached the handler. */
  boolean delivered(SharedIndexInformer<T> informer) {
    return delivered.containsAll(informer.getStore().listKeys());
  }

  /** Stops noting: from now on events flow as they come. */
  void finish() {
    done = true;
    delivered.clear();
  }
}
