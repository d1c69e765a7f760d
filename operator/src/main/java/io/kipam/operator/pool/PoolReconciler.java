package io.kipam.operator.pool;

import static java.util.stream.Collectors.toSet;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.PoolLayouts;
import io.kipam.operator.kube.PreconditionedDelete;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each IPPool's status true: counts from its IPBlocks' status, {@code Ready} once checked (no
 * older pool of its network overlaps it), {@code Exhausted}, {@code Terminating}. Reads only
 * caches: the pools, the blocks (mapped to their pool by {@code spec.pool}), and the pools again as
 * peers, so that a pool whose overlapping neighbour appears or disappears is looked at again. A
 * pool being deleted is kept by {@code kipam.io/pool-protection} until {@link PoolDeletion} has
 * seen its addresses go and removed its blocks.
 */
@ControllerConfiguration(
    name = PoolReconciler.NAME,
    finalizerName = ApiConstants.FINALIZER_POOL_PROTECTION)
public final class PoolReconciler implements Reconciler<IPPool>, Cleaner<IPPool> {

  public static final String NAME = "ippool";
  private static final String BLOCKS = "pool-blocks";
  private static final String PEERS = "pool-peers";
  private static final Logger log = LoggerFactory.getLogger(PoolReconciler.class);

  private final Clock clock;
  private final EventRecorder events;
  private final PoolTransitions transitions;
  private final OperatorMetrics metrics;
  private final Duration recheck;
  private final AddressLookup addresses;
  private final PreconditionedDelete delete;

  public PoolReconciler(
      Clock clock,
      EventRecorder events,
      OperatorMetrics metrics,
      Duration recheck,
      AddressLookup addresses,
      PreconditionedDelete delete) {
    this.clock = clock;
    this.events = events;
    this.transitions = new PoolTransitions(events);
    this.metrics = metrics;
    this.recheck = recheck;
    this.addresses = addresses;
    this.delete = delete;
  }

  @Override
  public List<EventSource<?, IPPool>> prepareEventSources(EventSourceContext<IPPool> context) {
    var blocks =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(IPBlock.class, IPPool.class)
                .withName(BLOCKS)
                .withSecondaryToPrimaryMapper(
                    (IPBlock block) ->
                        Blocks.poolOf(block).map(p -> Set.of(new ResourceID(p))).orElse(Set.of()))
                .build(),
            context);
    var primaryCache = context.getPrimaryCache();
    // A pool appearing or going may change the verdict on the pools it overlaps; pools' own
    // updates cannot (cidr and network are immutable), so only adds and deletes count.
    var peers =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(IPPool.class, IPPool.class)
                .withName(PEERS)
                .withSecondaryToPrimaryMapper(
                    (IPPool pool) ->
                        primaryCache
                            .list(other -> PoolOverlaps.conflict(pool, other))
                            .map(ResourceID::fromResource)
                            .collect(toSet()))
                .withOnUpdateFilter((before, after) -> false)
                .build(),
            context);
    return List.of(blocks, peers);
  }

  @Override
  public UpdateControl<IPPool> reconcile(IPPool pool, Context<IPPool> context) {
    publish(pool, facts(pool, context, Optional.empty()), context);
    return UpdateControl.noUpdate();
  }

  @Override
  public DeleteControl cleanup(IPPool pool, Context<IPPool> context) {
    PoolDeletion.Step step =
        new PoolDeletion(context.getClient(), addresses, delete)
            .advance(pool, blocksOf(pool, context));
    if (step.waitingFor().isPresent()) {
      publish(pool, facts(pool, context, step.waitingFor()), context);
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(recheck.toMillis());
    }
    events.record(
        pool,
        EventRecorder.Type.Normal,
        "Deleted",
        "no IPAddress and no IPBlock of the pool is left: released the pool");
    log.info(
        "IPPool {} has no IPAddress left; removing its finalizer", pool.getMetadata().getName());
    metrics.forgetPool(pool.getMetadata().getName());
    return DeleteControl.defaultDelete();
  }

  private PoolFacts facts(IPPool pool, Context<IPPool> context, Optional<String> terminating) {
    Optional<PoolLayout> layout;
    Optional<String> invalid;
    try {
      layout = Optional.of(PoolLayouts.of(pool.getSpec()));
      invalid = Optional.empty();
    } catch (IllegalArgumentException e) {
      layout = Optional.empty();
      invalid = Optional.of("spec does not describe a pool: " + e.getMessage());
    }
    @SuppressWarnings("unchecked")
    var peers =
        (InformerEventSource<IPPool, IPPool>)
            context.eventSourceRetriever().getEventSourceFor(IPPool.class, PEERS);
    Optional<IPPool> overlapping = PoolOverlaps.olderOverlapping(pool, peers.list().toList());
    return new PoolFacts(
        pool.getMetadata().getGeneration(),
        layout,
        invalid,
        blocksOf(pool, context),
        overlapping,
        terminating);
  }

  private static List<IPBlock> blocksOf(IPPool pool, Context<IPPool> context) {
    return context.getSecondaryResources(IPBlock.class).stream()
        .filter(b -> Blocks.belongsTo(b, pool))
        .sorted(Comparator.comparing(b -> b.getMetadata().getName()))
        .toList();
  }

  /** Computes the status, reports what changed, and writes the status only when it changed. */
  private void publish(IPPool pool, PoolFacts facts, Context<IPPool> context) {
    String name = pool.getMetadata().getName();
    IPPoolStatus before = pool.getStatus();
    IPPoolStatus status = PoolStatusCalculator.status(facts, before, clock.instant());
    if (status.getCapacity() != null) {
      metrics.pool(
          name,
          new BigInteger(status.getCapacity()),
          status.getAllocated(),
          new BigInteger(status.getAvailable()),
          status.getBlocks());
    }
    if (same(before, status, context)) {
      return;
    }
    IPPool fresh = new IPPool();
    fresh.setMetadata(new ObjectMetaBuilder().withName(name).build());
    fresh.setStatus(status);
    PrimaryUpdateAndCacheUtils.ssaPatchStatusAndCacheResource(pool, fresh, context);
    log.info(
        "IPPool {}: {} of {} addresses allocated in {} block(s); {}",
        name,
        status.getAllocated(),
        status.getCapacity(),
        status.getBlocks(),
        PoolTransitions.summary(status));
    transitions.report(pool, before, status);
  }

  private static boolean same(IPPoolStatus a, IPPoolStatus b, Context<IPPool> context) {
    if (a == null) {
      return false;
    }
    var serialization = context.getClient().getKubernetesSerialization();
    return Objects.equals(
        serialization.convertValue(a, Map.class), serialization.convertValue(b, Map.class));
  }
}
