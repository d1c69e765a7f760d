package io.kipam.operator.pool;

import static java.util.stream.Collectors.toSet;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
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
import io.kipam.api.ApiConstants;
import io.kipam.api.labels.Selectors;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.api.v1alpha1.PoolGeometry;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.audit.DuplicateSummary;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.ControllerCaches;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.FollowingEventSource;
import io.kipam.operator.kube.KindRelay;
import io.kipam.runtime.client.PreconditionedDelete;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each IPPool's status true: counts from its IPBlocks' status, {@code Ready} once checked (no
 * pool that overlaps it wins over it, see {@link PoolOverlaps}), {@code Exhausted}, {@code
 * Terminating}, and {@code DuplicateAddresses} while the latest audit found addresses of the pool
 * held twice ({@link DuplicateSummary}; looked at on every reconcile, so within the resync
 * interval). Reads caches: the pools, the blocks (mapped to their pool by {@code spec.pool}), and
 * the pools again as peers, so that a pool whose overlapping neighbour appears or disappears is
 * looked at again. The one exception is the decision that makes a pool Ready: it is taken on a
 * fresh LIST of every pool and written before any other Ready decision of the same network is taken
 * ({@link NetworkLocks}), since a cache that lags could let two overlapping pools both be Ready. A
 * pool already marked Ready keeps its verdict and needs no such read. A pool being deleted is kept
 * by {@code kipam.io/pool-protection} until {@link PoolDeletion} has seen its addresses go and
 * removed its blocks.
 */
@ControllerConfiguration(
    name = PoolReconciler.NAME,
    finalizerName = ApiConstants.FINALIZER_POOL_PROTECTION,
    // Consistent lists, page by page (see BlockReconciler).
    informer = @Informer(informerListLimit = ControllerCaches.LIST_PAGE))
public final class PoolReconciler implements Reconciler<IPPool>, Cleaner<IPPool> {

  public static final String NAME = "ippool";
  private static final String BLOCKS = "pool-blocks";
  private static final String PEERS = "pool-peers";
  private static final String NODES = "pool-nodes";
  private static final String RELAY = "pool-relay";
  private static final Logger log = LoggerFactory.getLogger(PoolReconciler.class);

  private final Clock clock;
  private final EventRecorder events;
  private final PoolTransitions transitions;
  private final OperatorMetrics metrics;
  private final Duration recheck;
  private final AddressLookup addresses;
  private final PreconditionedDelete delete;
  private final NetworkLocks locks = new NetworkLocks();
  private final DuplicateSummary duplicates;
  private final ControllerCaches caches;

  public PoolReconciler(
      Clock clock,
      EventRecorder events,
      OperatorMetrics metrics,
      Duration recheck,
      AddressLookup addresses,
      PreconditionedDelete delete,
      DuplicateSummary duplicates,
      ControllerCaches caches) {
    this.clock = clock;
    this.events = events;
    this.transitions = new PoolTransitions(events);
    this.metrics = metrics;
    this.recheck = recheck;
    this.addresses = addresses;
    this.delete = delete;
    this.duplicates = duplicates;
    this.caches = caches;
  }

  @Override
  public List<EventSource<?, IPPool>> prepareEventSources(EventSourceContext<IPPool> context) {
    var primaryCache = context.getPrimaryCache();
    // The pools' one cache is this controller's own informer; the blocks' and the Nodes' are the
    // IPBlock controller's. Their events are followed here, not watched again.
    caches.poolKind().own(primaryCache);
    var relay = new KindRelay<>(RELAY, caches.poolKind());
    Duration syncTimeout =
        context.getControllerConfiguration().getConfigurationService().cacheSyncTimeout();
    var blocks =
        new FollowingEventSource<IPBlock, IPPool>(
                BLOCKS,
                caches.blockKind(),
                syncTimeout,
                block -> Blocks.poolOf(block).map(p -> Set.of(new ResourceID(p))).orElse(Set.of()))
            .withSecondaries(pool -> Set.copyOf(caches.blocksOf(pool.getMetadata().getName())));
    // A pool appearing or going may change the verdict on the pools it overlaps; pools' own
    // updates cannot (cidr and network are immutable), so only adds and deletes count.
    var peers =
        new FollowingEventSource<IPPool, IPPool>(
            PEERS,
            caches.poolKind(),
            syncTimeout,
            pool ->
                primaryCache
                    .list(other -> PoolOverlaps.conflict(pool, other))
                    .map(ResourceID::fromResource)
                    .collect(toSet()));
    peers.setOnUpdateFilter((after, before) -> false);
    // status.nodes counts the Nodes a pool's nodeSelector matches: a Node's arrival, deletion and
    // label changes count; its frequent status updates do not.
    var nodes =
        new FollowingEventSource<Node, IPPool>(
            NODES,
            caches.nodeKind(),
            syncTimeout,
            node -> primaryCache.list().map(ResourceID::fromResource).collect(toSet()));
    nodes.setOnUpdateFilter(
        (after, before) ->
            !Objects.equals(before.getMetadata().getLabels(), after.getMetadata().getLabels()));
    return List.of(relay, blocks, peers, nodes);
  }

  @Override
  public UpdateControl<IPPool> reconcile(IPPool pool, Context<IPPool> context) {
    PoolFacts facts = facts(pool, context, Optional.empty());
    Optional<Outcome> outcome;
    if (facts.invalid().isPresent() || PoolOverlaps.markedReady(pool)) {
      // Nothing to decide: an invalid pool is never Ready, and a pool marked Ready loses only to
      // another pool marked Ready before it, which no decision of this operator makes.
      Optional<IPPool> winner = PoolOverlaps.winnerOver(pool, peers(context));
      outcome = Optional.of(write(pool, pool.getStatus(), facts.withOverlapping(winner), context));
    } else {
      outcome = locks.holding(PoolOverlaps.network(pool), () -> decideReady(pool, facts, context));
    }
    report(pool, outcome);
    Optional<Duration> deferred = outcome.flatMap(o -> Optional.ofNullable(o.deferred()));
    if (deferred.isEmpty()
        && outcome
            .map(o -> o.status() != null && "0".equals(o.status().getAvailable()))
            .orElse(false)) {
      // A count of none available is renewed (status.countedAt), so that the node daemons may
      // call the pool exhausted once the count is newer than their own last ADD or DEL.
      deferred = Optional.of(PoolStatusCalculator.RECOUNT);
    }
    return deferred
        .map(d -> UpdateControl.<IPPool>noUpdate().rescheduleAfter(Math.max(1, d.toMillis())))
        .orElseGet(UpdateControl::noUpdate);
  }

  /**
   * Whether a pool not marked Ready in the cache may be Ready, decided on every pool as the API
   * server has them now (a LIST without resourceVersion is a consistent read), and written. Runs
   * under the network's lock: nothing else belongs here.
   */
  private Optional<Outcome> decideReady(IPPool cached, PoolFacts facts, Context<IPPool> context) {
    List<IPPool> pools = context.getClient().resources(IPPool.class).list().getItems();
    String uid = cached.getMetadata().getUid();
    return pools.stream()
        .filter(p -> uid.equals(p.getMetadata().getUid()))
        // Deleted meanwhile: cleanup writes its status, Ready=False.
        .filter(self -> self.getMetadata().getDeletionTimestamp() == null)
        .findFirst()
        .map(
            self ->
                write(
                    cached,
                    self.getStatus(),
                    facts.withOverlapping(PoolOverlaps.winnerOver(self, pools)),
                    context));
  }

  @Override
  public DeleteControl cleanup(IPPool pool, Context<IPPool> context) {
    PoolDeletion.Step step =
        new PoolDeletion(context.getClient(), addresses, delete)
            .advance(pool, blocksOf(pool, context));
    if (step.waitingFor().isPresent()) {
      report(
          pool,
          Optional.of(
              write(pool, pool.getStatus(), facts(pool, context, step.waitingFor()), context)));
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
    countsWritten.remove(pool.getMetadata().getName());
    return DeleteControl.defaultDelete();
  }

  private PoolFacts facts(IPPool pool, Context<IPPool> context, Optional<String> terminating) {
    Optional<PoolLayout> layout;
    Optional<String> invalid;
    try {
      layout = Optional.of(PoolGeometry.of(pool.getSpec()));
      invalid = Optional.empty();
    } catch (IllegalArgumentException e) {
      layout = Optional.empty();
      invalid = Optional.of("spec does not describe a pool: " + e.getMessage());
    }
    return new PoolFacts(
        pool.getMetadata().getGeneration(),
        layout,
        invalid,
        blocksOf(pool, context),
        Optional.empty(),
        terminating);
  }

  private static List<IPPool> peers(Context<IPPool> context) {
    return context.getPrimaryCache().list().toList();
  }

  private static List<IPBlock> blocksOf(IPPool pool, Context<IPPool> context) {
    return context.getSecondaryResources(IPBlock.class).stream()
        .filter(b -> Blocks.belongsTo(b, pool))
        .sorted(Comparator.comparing(b -> b.getMetadata().getName()))
        .toList();
  }

  /**
   * How many Nodes may use the pool: those its {@code spec.nodeSelector} matches, every Node when
   * it has none; null when the selector is invalid (the pool is refused then anyway).
   */
  private Integer nodesFor(IPPool pool) {
    LabelSelector selector = pool.getSpec() == null ? null : pool.getSpec().getNodeSelector();
    try {
      return (int)
          caches.nodes().stream()
              .filter(n -> selector == null || Selectors.matches(selector, labelsOf(n)))
              .count();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static Map<String, String> labelsOf(Node node) {
    Map<String, String> labels = node.getMetadata().getLabels();
    return labels == null ? Map.of() : labels;
  }

  /**
   * At most one status write per pool in this period when only its counts changed. Every status
   * write of a pool reaches every kipam-node daemon (each watches the pools), and the block status
   * writes the counts follow grow with the nodes: coalesced, a daemon's share stays the same
   * whatever the cluster's size. A change of anything else (Ready, a condition, {@code
   * status.nodes}) is written at once.
   */
  public static final Duration COUNTS_PERIOD = Duration.ofSeconds(2);

  private final Map<String, Instant> countsWritten = new ConcurrentHashMap<>();

  /**
   * A pool's status as it was, as computed, and whether it was written; {@code deferred}: the
   * counts changed but were written less than {@link #COUNTS_PERIOD} ago, so the pool is looked at
   * again after that long (null otherwise).
   */
  private record Outcome(
      IPPoolStatus before, IPPoolStatus status, boolean written, Duration deferred) {
    Outcome(IPPoolStatus before, IPPoolStatus status, boolean written) {
      this(before, status, written, null);
    }
  }

  /** Computes the status and writes it only when it differs from {@code before}. */
  private Outcome write(
      IPPool pool, IPPoolStatus before, PoolFacts facts, Context<IPPool> context) {
    IPPoolStatus status = PoolStatusCalculator.status(facts, before, clock.instant());
    status.setNodes(nodesFor(pool));
    duplicates
        .of(pool.getMetadata().getName())
        .ifPresent(
            found ->
                status
                    .getConditions()
                    .add(
                        Conditions.of(
                            PoolStatusCalculator.DUPLICATE_ADDRESSES,
                            Conditions.TRUE,
                            "Duplicates",
                            found,
                            pool.getMetadata().getGeneration(),
                            before == null ? List.of() : before.getConditions(),
                            clock.instant())));
    if (same(before, status, context)) {
      return new Outcome(before, status, false);
    }
    String name = pool.getMetadata().getName();
    Instant now = clock.instant();
    Instant last = countsWritten.get(name);
    if (last != null
        && last.plus(COUNTS_PERIOD).isAfter(now)
        && sameButCounts(before, status, context)) {
      return new Outcome(before, before, false, Duration.between(now, last.plus(COUNTS_PERIOD)));
    }
    IPPool fresh = new IPPool();
    fresh.setMetadata(new ObjectMetaBuilder().withName(name).build());
    fresh.setStatus(status);
    PrimaryUpdateAndCacheUtils.ssaPatchStatusAndCacheResource(pool, fresh, context);
    countsWritten.put(name, now);
    return new Outcome(before, status, true);
  }

  /** Publishes the pool's metrics and, when its status was written, what changed. */
  private void report(IPPool pool, Optional<Outcome> outcome) {
    if (outcome.isEmpty()) {
      return;
    }
    String name = pool.getMetadata().getName();
    IPPoolStatus status = outcome.get().status();
    if (status.getCapacity() != null) {
      metrics.pool(
          name,
          new BigInteger(status.getCapacity()),
          status.getAllocated(),
          new BigInteger(status.getAvailable()),
          status.getBlocks());
    }
    if (!outcome.get().written()) {
      return;
    }
    log.info(
        "IPPool {}: {} of {} addresses allocated in {} block(s); {}",
        name,
        status.getAllocated(),
        status.getCapacity(),
        status.getBlocks(),
        PoolTransitions.summary(status));
    transitions.report(pool, outcome.get().before(), status);
  }

  /**
   * Whether {@code a} and {@code b} differ in their counts alone (and in the condition messages
   * that quote them).
   */
  private static boolean sameButCounts(IPPoolStatus a, IPPoolStatus b, Context<IPPool> context) {
    return a != null && Objects.equals(withoutCounts(a, context), withoutCounts(b, context));
  }

  /** {@code status} as a map without its counts and the condition messages that quote them. */
  private static Map<Object, Object> withoutCounts(IPPoolStatus status, Context<IPPool> context) {
    Map<?, ?> map =
        context.getClient().getKubernetesSerialization().convertValue(status, Map.class);
    Map<Object, Object> rest = withoutMessages(map);
    rest.keySet().removeAll(List.of("allocated", "available", "blocks", "countedAt"));
    return rest;
  }

  /** A status map whose conditions lack their messages (which quote the counts). */
  @SuppressWarnings("unchecked")
  private static Map<Object, Object> withoutMessages(Map<?, ?> status) {
    Map<Object, Object> copy = new HashMap<>(status);
    Object conditions = copy.get("conditions");
    if (conditions instanceof List<?> list) {
      copy.put(
          "conditions",
          list.stream()
              .map(
                  c -> {
                    Map<Object, Object> condition = new HashMap<>((Map<Object, Object>) c);
                    condition.remove("message");
                    return condition;
                  })
              .toList());
    }
    return copy;
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
