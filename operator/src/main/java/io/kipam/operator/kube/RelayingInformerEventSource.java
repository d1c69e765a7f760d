package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

/**
 * An {@link InformerEventSource} that is the one cache of its kind ({@link SharedKind}): it maps
 * events to its own controller's primaries as any informer event source does, and relays every
 * event to the followers of the kind in the other controllers.
 */
public final class RelayingInformerEventSource<R extends HasMetadata, P extends HasMetadata>
    extends InformerEventSource<R, P> {

  private final SharedKind<R> kind;

  public RelayingInformerEventSource(
      InformerEventSourceConfiguration<R> configuration,
      EventSourceContext<P> context,
      SharedKind<R> kind) {
    super(configuration, context);
    this.kind = kind;
    kind.own(this);
  }

  @Override
  public void onAdd(R resource) {
    super.onAdd(resource);
    kind.added(resource);
  }

  @Override
  public void onUpdate(R previous, R updated) {
    super.onUpdate(previous, updated);
    kind.updated(previous, updated);
  }

  @Override
  public void onDelete(R resource, boolean finalStateUnknown) {
    super.onDelete(resource, finalStateUnknown);
    kind.deleted(resource, finalStateUnknown);
  }
}
