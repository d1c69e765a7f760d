package io.kipam.operator.block;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PoolGeometry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Pool layouts parsed once per pool object (UID) and generation, so a pool deleted and created
 * again under its name is never read with the old one's layout.
 */
final class LayoutCache {

  private record Entry(String uid, long generation, PoolLayout layout) {}

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();

  /**
   * @throws IllegalArgumentException when the pool's spec describes no layout
   */
  PoolLayout of(IPPool pool) {
    String uid = pool.getMetadata().getUid();
    long generation = pool.getMetadata().getGeneration();
    Entry entry = entries.get(pool.getMetadata().getName());
    if (entry != null && entry.uid().equals(uid) && entry.generation() == generation) {
      return entry.layout();
    }
    PoolLayout layout = PoolGeometry.of(pool.getSpec());
    entries.put(pool.getMetadata().getName(), new Entry(uid, generation, layout));
    return layout;
  }
}
