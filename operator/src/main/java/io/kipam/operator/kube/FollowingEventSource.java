package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import java.time.Duration;
import java.util.Set;
import java.util.function.Function;

/**
 * An event source of a kind another controller holds ({@link SharedKind}): it opens no watch and
 * keeps no cache, but follows the events of the kind's one informer, maps each to the primaries it
 * concerns and triggers their reconcile, with the same add, update and delete filters as an
 * informer event source (an update filter is given the new object first, then the old one). Its
 * start waits until the kind's cache has synced, so its controller, like one with an informer of
 * its own, reconciles nothing before then. Secondary resources are read from the kind's cache by
 * the given function.
 */
public final class FollowingEventSource<R extends HasMetadata, P extends HasMetadata>
    extends AbstractEventSource<R, P> implements ResourceEventHandler<R> {

  private final SharedKind<R> kind;
  private final Duration syncTimeout;
  private final Function<R, Set<ResourceID>> toPrimaries;
  private Function<P, Set<R>> secondaries = primary -> Set.of();

  public FollowingEventSource(
      String name,
      SharedKind<R> kind,
      Duration syncTimeout,
      Function<R, Set<ResourceID>> toPrimaries) {
    super(kind.type(), name);
    this.kind = kind;
    this.syncTimeout = syncTimeout;
    this.toPrimaries = toPrimaries;
  }

  /** How a primary's secondaries of this kind are found in the kind's cache. */
  public FollowingEventSource<R, P> withSecondaries(Function<P, Set<R>> secondaries) {
    this.secondaries = secondaries;
    return this;
  }

  @Override
  public void start() {
    kind.follow(this);
    kind.awaitSynced(syncTimeout);
    super.start();
  }

  @Override
  public void stop() {
    kind.unfollow(this);
    super.stop();
  }

  @Override
  public void onAdd(R resource) {
    if (generic(resource) && (onAddFilter == null || onAddFilter.accept(resource))) {
      propagate(resource);
    }
  }

  @Override
  public void onUpdate(R previous, R updated) {
    if (generic(updated) && (onUpdateFilter == null || onUpdateFilter.accept(updated, previous))) {
      propagate(updated);
    }
  }

  @Override
  public void onDelete(R resource, boolean finalStateUnknown) {
    if (generic(resource)
        && (onDeleteFilter == null || onDeleteFilter.accept(resource, finalStateUnknown))) {
      propagate(resource);
    }
  }

  private boolean generic(R resource) {
    return genericFilter == null || genericFilter.accept(resource);
  }

  private void propagate(R resource) {
    var handler = getEventHandler();
    if (handler == null) {
      return;
    }
    toPrimaries.apply(resource).forEach(id -> handler.handleEvent(new Event(id)));
  }

  @Override
  public Set<R> getSecondaryResources(P primary) {
    return secondaries.apply(primary);
  }
}
