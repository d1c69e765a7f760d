package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.util.Set;

/**
 * Hands a controller's own primaries to the rest of kipam-operator: registered with the controller,
 * it receives every event of the controller's informer (JOSDK passes them to each event source that
 * is {@link ResourceEventAware}, before the controller's own filters) and relays it to the
 * followers of the {@link SharedKind}. It triggers no reconcile of its own controller.
 */
public final class KindRelay<P extends HasMetadata> extends AbstractEventSource<P, P>
    implements ResourceEventAware<P> {

  private final SharedKind<P> kind;

  public KindRelay(String name, SharedKind<P> kind) {
    super(kind.type(), name);
    this.kind = kind;
  }

  @Override
  public void onResourceCreated(P resource) {
    kind.added(resource);
  }

  @Override
  public void onResourceUpdated(P updated, P previous) {
    kind.updated(previous, updated);
  }

  @Override
  public void onResourceDeleted(P resource) {
    kind.deleted(resource, false);
  }

  @Override
  public Set<P> getSecondaryResources(P primary) {
    return Set.of();
  }
}
