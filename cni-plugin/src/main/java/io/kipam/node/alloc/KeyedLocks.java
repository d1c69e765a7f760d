package io.kipam.node.alloc;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One lock per key, made on first use and dropped when nobody holds or waits for it: calls for the
 * same key run one at a time, calls for different keys never wait for each other (unlike a striped
 * lock, where unrelated keys share a stripe).
 */
final class KeyedLocks<K> {

  private static final class Entry {
    final ReentrantLock lock = new ReentrantLock();
    int users;
  }

  private final Map<K, Entry> entries = new ConcurrentHashMap<>();

  <T> T with(K key, Supplier<T> work) {
    Entry entry =
        entries.compute(
            key,
            (k, e) -> {
              Entry held = e == null ? new Entry() : e;
              held.users++;
              return held;
            });
    entry.lock.lock();
    try {
      return work.get();
    } finally {
      entry.lock.unlock();
      entries.compute(key, (k, e) -> --e.users == 0 ? null : e);
    }
  }
}
