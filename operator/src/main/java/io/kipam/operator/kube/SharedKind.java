package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.ManagedInformerEventSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One kind's single cache in kipam-operator, and the events its informer sees (design §6: one cache
 * per kind, shared by every controller that needs it). The controller whose informer holds the kind
 * {@link #own}s it and relays every event of it ({@link KindRelay} for a controller's primaries,
 * {@link RelayingInformerEventSource} for a secondary kind); every other user reads the cache here
 * and follows the events ({@link FollowingEventSource}) instead of opening a watch of its own.
 * Until the owner's informer has started and synced, {@link #synced} is false and the cache reads
 * as empty.
 */
public final class SharedKind<R extends HasMetadata> {

  private static final Duration POLL = Duration.ofMillis(50);

  private final Class<R> type;
  private final List<ResourceEventHandler<R>> followers = new CopyOnWriteArrayList<>();
  private volatile IndexerResourceCache<R> cache;

  public SharedKind(Class<R> type) {
    this.type = type;
  }

  /** Makes {@code owner} the one cache of the kind; a second owner is a wiring mistake. */
  public void own(IndexerResourceCache<R> owner) {
    if (cache != null && cache != owner) {
      throw new IllegalStateException(type.getSimpleName() + " already has its one cache");
    }
    cache = owner;
  }

  public Class<R> type() {
    return type;
  }

  /** Whether the owner's informer runs and has synced with the API server. */
  public boolean synced() {
    if (!(cache instanceof ManagedInformerEventSource<?, ?, ?> source) || !source.isRunning()) {
      return false;
    }
    var informers = source.informerHealthIndicators().values();
    return !informers.isEmpty() && informers.stream().allMatch(i -> i.hasSynced());
  }

  /**
   * Waits until {@link #synced}, as JOSDK waits for a controller's own informers before it
   * reconciles, so that no reconcile decides on a cache of this kind that is still empty.
   */
  void awaitSynced(Duration timeout) {
    Instant deadline = Instant.now().plus(timeout);
    while (!synced()) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            "the cache of " + type.getSimpleName() + " did not sync within " + timeout);
      }
      try {
        Thread.sleep(POLL.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for a cache", e);
      }
    }
  }

  /** The cluster-scoped object {@code name}; empty until the owner's informer runs. */
  public Optional<R> get(String name) {
    if (!(cache instanceof ManagedInformerEventSource<?, ?, ?> source) || !source.isRunning()) {
      return Optional.empty();
    }
    return cache.get(new ResourceID(name));
  }

  public List<R> list() {
    return cache.list().toList();
  }

  public List<R> byIndex(String index, String key) {
    return cache.byIndex(index, key);
  }

  void follow(ResourceEventHandler<R> follower) {
    followers.add(follower);
  }

  void unfollow(ResourceEventHandler<R> follower) {
    followers.remove(follower);
  }

  void added(R resource) {
    followers.forEach(f -> f.onAdd(resource));
  }

  void updated(R previous, R updated) {
    followers.forEach(f -> f.onUpdate(previous, updated));
  }

  void deleted(R resource, boolean finalStateUnknown) {
    followers.forEach(f -> f.onDelete(resource, finalStateUnknown));
  }
}
