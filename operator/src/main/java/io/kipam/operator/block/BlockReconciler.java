package io.kipam.operator.block;

import static java.util.stream.Collectors.toSet;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kipam.api.ApiConstants;
import io.kipam.api.DemandAnnotation;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.ControllerCaches;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.FollowingEventSource;
import io.kipam.operator.kube.KindRelay;
import io.kipam.operator.kube.NodeMetadata;
import io.kipam.operator.kube.RelayingInformerEventSource;
import io.kipam.runtime.client.PreconditionedDelete;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's half of each IPBlock's life after its claim: the release handshake with the
 * holding node's daemon ({@link ReleasePlanner} decides, {@link BlockSteps} carries out), moving an
 * empty block to a node that is short ({@link PressureRelief}), and taking back a block whose Node
 * object has been gone for the grace period once no IPAddress references it. Every status change of
 * a block is an event here (the daemon's {@code allocated} and answers live in the status), and so
 * is the deletion of a Node, which maps to that node's blocks.
 *
 * <p>The finalizer {@code kipam.io/block-protection} keeps every deleted block, whoever deleted it
 * (a person, the pool's garbage collection, the operator itself after a Ready answer), until its
 * holder has answered {@code Ready} (or its Node has been gone for the grace period) and a fresh
 * read finds no IPAddress of it; the sub-claim of a deleted IPAMClaim also waits out its pool's
 * reuse delay from its deletion. A block being deleted is closed on its node for good.
 */
@ControllerConfiguration(
    name = BlockReconciler.NAME,
    generationAwareEventProcessing = false,
    finalizerName = ApiConstants.FINALIZER_BLOCK_PROTECTION,
    // A page size makes the informer's lists consistent reads: without one, its first list is at
    // resourceVersion=0, which a lagging watch cache may answer without the newest objects.
    informer = @Informer(informerListLimit = ControllerCaches.LIST_PAGE))
public final class BlockReconciler implements Reconciler<IPBlock>, Cleaner<IPBlock> {

  public static final String NAME = "ipblock";
  private static final Logger log = LoggerFactory.getLogger(BlockReconciler.class);
  private static final String NODES = "block-nodes";
  private static final String POOLS = "block-pools";
  private static final String BY_NODE = "kipam-block-by-node";
  private static final String RELAY = "block-relay";
  private static final String BY_DEMAND = "kipam-node-by-demand";
  private static final String BY_SLOT_DEMAND = "kipam-node-by-slot-demand";
  private static final Duration PRUNE_EVERY = Duration.ofMinutes(5);

  /**
   * How soon a block is looked at again when a request its look decided (to another block) was not
   * written because that block changed meanwhile.
   */
  static final Duration AFTER_CONFLICT = Duration.ofSeconds(1);

  /** How often a block of a pool that nodes are short of is looked at while the demand lasts. */
  static final Duration DEMAND_RECHECK = Duration.ofSeconds(5);

  private final Clock clock;
  private final Duration nodeGoneGrace;
  private final ReleasePlanner planner;
  private final HandshakeMemory memory = new HandshakeMemory();
  private final PressureRelief pressure = new PressureRelief();
  private final BlockSteps steps;
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Set<String> demandReported = ConcurrentHashMap.newKeySet();
  private final Map<String, Integer> overReported = new ConcurrentHashMap<>();
  private volatile Instant lastPrune = Instant.EPOCH;

  private final ControllerCaches caches;

  public BlockReconciler(
      Clock clock,
      Duration idleDelay,
      Duration retryDelay,
      Duration recheck,
      Duration nodeGoneGrace,
      KubernetesClient client,
      AddressLookup addresses,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics,
      ControllerCaches caches) {
    this.clock = clock;
    this.caches = caches;
    this.nodeGoneGrace = nodeGoneGrace;
    this.planner = new ReleasePlanner(idleDelay, retryDelay);
    BlockReleaser releaser = new BlockReleaser(client, addresses, delete, events, metrics);
    this.steps = new BlockSteps(releaser, memory, events, metrics, recheck);
    this.events = events;
    this.metrics = metrics;
  }

  @Override
  public List<EventSource<?, IPBlock>> prepareEventSources(EventSourceContext<IPBlock> context) {
    var blocks = context.getPrimaryCache();
    // The blocks' one cache is this controller's own informer, the Nodes' one cache is kept here
    // too; the pools' is the IPPool controller's, whose events are followed, not watched again.
    caches.blockKind().own(blocks);
    var relay = new KindRelay<>(RELAY, caches.blockKind());
    blocks.addIndexer(
        BY_NODE,
        b ->
            b.getSpec() == null || b.getSpec().getNode() == null
                ? List.of()
                : List.of(b.getSpec().getNode()));
    blocks.addIndexer(
        ControllerCaches.BLOCKS_BY_POOL, b -> Blocks.poolOf(b).map(List::of).orElse(List.of()));
    // A Node's arrival and deletion matter here, and a change of the demand its daemon records
    // (kipam.io/demand); its frequent status updates do not. A node short of a pool maps to one
    // slot of that pool, whose look then relieves it.
    var nodes =
        new RelayingInformerEventSource<>(
            InformerEventSourceConfiguration.from(Node.class, IPBlock.class)
                .withName(NODES)
                .withInformerListLimit(ControllerCaches.LIST_PAGE)
                .withItemStore(NodeMetadata.store())
                .withSecondaryToPrimaryMapper(
                    (Node node) -> {
                      Set<ResourceID> ids =
                          blocks.byIndex(BY_NODE, node.getMetadata().getName()).stream()
                              .map(ResourceID::fromResource)
                              .collect(toSet());
                      for (String pool : demand(node)) {
                        blocks.byIndex(ControllerCaches.BLOCKS_BY_POOL, pool).stream()
                            .filter(b -> !Blocks.subClaim(b))
                            .min(Comparator.comparing(b -> b.getMetadata().getName()))
                            .map(ResourceID::fromResource)
                            .ifPresent(ids::add);
                      }
                      // A chosen address in another node's Exclusive slot: that slot looks.
                      for (String slot : slotDemand(node)) {
                        ids.add(new ResourceID(slotName(slot)));
                      }
                      return ids;
                    })
                // JOSDK passes the new object first, then the old one.
                .withOnUpdateFilter(
                    (updated, previous) ->
                        (!demand(updated).isEmpty() && !demand(updated).equals(demand(previous)))
                            || (!slotDemand(updated).isEmpty()
                                && !slotDemand(updated).equals(slotDemand(previous))))
                .build(),
            context,
            caches.nodeKind());
    nodes.addIndexer(BY_DEMAND, node -> List.copyOf(demand(node)));
    nodes.addIndexer(BY_SLOT_DEMAND, node -> List.copyOf(slotDemand(node)));
    metrics.demandFrom(
        () ->
            nodes
                .list()
                .filter(
                    node -> LiveDemand.live(node.getMetadata().getAnnotations(), clock.instant()))
                .flatMap(node -> demand(node).stream())
                .collect(
                    java.util.stream.Collectors.groupingBy(
                        pool -> pool, java.util.stream.Collectors.counting())));
    // Pools are looked up (their layout, when a block is full); only a changed maxBlocksPerNode
    // makes their slots be looked at again, so a lowered limit takes effect at once.
    var pools =
        new FollowingEventSource<IPPool, IPBlock>(
            POOLS,
            caches.poolKind(),
            context.getControllerConfiguration().getConfigurationService().cacheSyncTimeout(),
            (IPPool pool) ->
                blocks
                    .byIndex(ControllerCaches.BLOCKS_BY_POOL, pool.getMetadata().getName())
                    .stream()
                    .filter(b -> b.getSpec() != null && !Blocks.subClaim(b))
                    .map(ResourceID::fromResource)
                    .collect(toSet()));
    pools.setOnAddFilter(pool -> false);
    pools.setOnDeleteFilter((pool, unknown) -> false);
    pools.setOnUpdateFilter(
        (updated, previous) -> BlockLimit.limit(updated) != BlockLimit.limit(previous));
    return List.of(relay, nodes, pools);
  }

  @Override
  public UpdateControl<IPBlock> reconcile(IPBlock block, Context<IPBlock> context) {
    Instant now = clock.instant();
    prune(context, now);
    if (block.getSpec() == null) {
      return UpdateControl.noUpdate();
    }
    Set<String> demanding = demanding(block, context, now);
    reportDemand(block, demanding, context);
    UpdateControl<IPBlock> control = look(block, context, now, demanding);
    // A short node's failed ADDs leave nothing behind that would trigger a look, and neither does
    // a request its holder never answers (a stopped daemon): while demand lasts, look again soon.
    if (!demanding.isEmpty()
        && control.getScheduleDelay().map(d -> d > DEMAND_RECHECK.toMillis()).orElse(true)) {
      control = control.rescheduleAfter(DEMAND_RECHECK.toMillis());
    }
    return control;
  }

  private UpdateControl<IPBlock> look(
      IPBlock block, Context<IPBlock> context, Instant now, Set<String> demanding) {
    Set<String> wanting = slotWantedBy(block, context, now);
    if (!wanting.isEmpty()) {
      boolean asked =
          steps.requestShare(
              block,
              "node"
                  + (wanting.size() == 1 ? " " : "s ")
                  + String.join(", ", wanting)
                  + " asked for a chosen address in it",
              now);
      return asked ? UpdateControl.noUpdate() : recheckAfter(Optional.of(AFTER_CONFLICT));
    }
    if (!demanding.isEmpty()
        && pressure.relieveShortNodes(pool(block), poolBlocks(context), steps, now, demanding)) {
      return recheckAfter(Optional.of(AFTER_CONFLICT));
    }
    if (Blocks.shared(block)) {
      // A Shared slot is handed out address by address through sub-claims, each given back by
      // its holder; no node's handshake applies to the slot itself. One that just turned Shared
      // may leave a node short that waited for it.
      boolean unwritten =
          SlotConversion.asked(block)
              && pressure.relieveShortNodes(pool(block), poolBlocks(context), steps, now);
      return unwritten ? recheckAfter(Optional.of(AFTER_CONFLICT)) : UpdateControl.noUpdate();
    }
    Optional<NodeAbsence> absence = nodeAbsence(block, context, now);
    if (absence.isPresent() && !answeredReady(block)) {
      NodeAbsence gone = absence.get();
      if (!gone.graceOver()) {
        return recheckAfter(Optional.of(gone.remaining()));
      }
      return recheckAfter(steps.nodeGone(block).recheck());
    }
    if (SlotConversion.underWay(block)) {
      // Its holder is making it Shared: no release round may start meanwhile.
      return UpdateControl.noUpdate();
    }
    ReleasePlan plan = planner.plan(block, memory, now, overLimit(block, context));
    if (plan instanceof ReleasePlan.Wait wait) {
      steps.reportRefusal(block);
      boolean unwritten = pressure.relieve(block, pool(block), poolBlocks(context), steps, now);
      if (refused(block)) {
        // The node that was short when this block was asked for is short still.
        unwritten |= pressure.relieveShortNodes(pool(block), poolBlocks(context), steps, now);
      }
      if (unwritten) {
        return recheckAfter(Optional.of(AFTER_CONFLICT));
      }
      return recheckAfter(Optional.of(wait.recheck()).filter(d -> !d.isZero()));
    }
    if (plan instanceof ReleasePlan.Request request) {
      steps.request(block, request.reason(), now);
    } else if (plan instanceof ReleasePlan.Clear clear) {
      steps.clear(block, clear.round(), now);
    } else if (plan instanceof ReleasePlan.Release release) {
      return recheckAfter(steps.release(block, release.round()));
    } else if (plan instanceof ReleasePlan.Ignore ignore) {
      steps.ignore(block, ignore.why());
    }
    return UpdateControl.noUpdate();
  }

  /**
   * Reports a node over its pool's {@code maxBlocksPerNode} (an Event on the pool, once per count)
   * and says why the block is to be taken back when it is one of that node's empty excess slots.
   */
  private Optional<String> overLimit(IPBlock block, Context<IPBlock> context) {
    Optional<IPPool> pool = pool(block);
    if (pool.isEmpty()) {
      return Optional.empty();
    }
    String key = block.getSpec().getNode() + "/" + pool.get().getMetadata().getName();
    // Most pools set no limit: their blocks are not listed on every look.
    List<IPBlock> blocks =
        BlockLimit.limit(pool.get()) == 0
            ? List.of()
            : poolBlocks(context).apply(pool.get().getMetadata().getName());
    Optional<BlockLimit.Over> over = BlockLimit.over(block, pool.get(), blocks);
    if (over.isEmpty()) {
      overReported.remove(key);
      return Optional.empty();
    }
    if (!Integer.valueOf(over.get().held()).equals(overReported.put(key, over.get().held()))) {
      log.warn("{}: its empty blocks beyond it are taken back", over.get().describe());
      events.record(
          pool.get(),
          EventRecorder.Type.Warning,
          "OverBlockLimit",
          over.get().describe() + "; its empty blocks beyond it are taken back");
    }
    return BlockLimit.excess(block, pool.get(), blocks);
  }

  /**
   * Records the Event {@code NodesShort} on the pool when a Node starts to record demand for it,
   * once per Node and pool while the demand lasts.
   */
  private void reportDemand(IPBlock block, Set<String> demanding, Context<IPBlock> context) {
    Optional<String> name = Blocks.poolOf(block);
    if (name.isEmpty()) {
      return;
    }
    String prefix = name.get() + "/";
    demandReported.removeIf(
        key -> key.startsWith(prefix) && !demanding.contains(key.substring(prefix.length())));
    List<String> added =
        demanding.stream().filter(n -> demandReported.add(prefix + n)).sorted().toList();
    Optional<IPPool> pool = pool(block);
    if (!added.isEmpty() && pool.isPresent()) {
      events.record(
          pool.get(),
          EventRecorder.Type.Warning,
          "NodesShort",
          "node"
              + (added.size() == 1 ? " " : "s ")
              + String.join(", ", added)
              + " find no address of the pool they can reach (kipam.io/demand); a slot is moved"
              + " or made Shared for them");
    }
  }

  /** The cached blocks naming a pool, by the pool's name. */
  private static Function<String, List<IPBlock>> poolBlocks(Context<IPBlock> context) {
    return name -> context.getPrimaryCache().byIndex(ControllerCaches.BLOCKS_BY_POOL, name);
  }

  private static boolean refused(IPBlock block) {
    return block.getStatus() != null
        && block.getStatus().getRelease() != null
        && block.getStatus().getRelease().getState() == ReleaseState.Refused;
  }

  /**
   * A block being deleted: the same handshake, asked for at once; its finalizer goes when its
   * holder has answered Ready (or its Node has been gone for the grace period) and a fresh read
   * finds no IPAddress of it. The sub-claim of a deleted IPAMClaim first rests for its pool's reuse
   * delay ({@link ClaimAddressRest}).
   */
  @Override
  public DeleteControl cleanup(IPBlock block, Context<IPBlock> context) {
    Instant now = clock.instant();
    if (block.getSpec() == null) {
      return DeleteControl.defaultDelete(); // not a block kipam could have handed addresses from
    }
    Optional<Duration> resting = ClaimAddressRest.remaining(block, pool(block), now);
    if (resting.isPresent()) {
      return keep(resting); // a deleted claim's address rests before anyone else may hold it
    }
    if (Blocks.shared(block)) {
      return steps.sharedSlotMayGo(block)
          ? DeleteControl.defaultDelete()
          : keep(Optional.of(steps.recheck()));
    }
    Optional<NodeAbsence> absence = nodeAbsence(block, context, now);
    if (absence.isPresent() && !answeredReady(block)) {
      NodeAbsence gone = absence.get();
      if (!gone.graceOver()) {
        return keep(Optional.of(gone.remaining()));
      }
      BlockSteps.NodeGoneStep step = steps.nodeGone(block);
      return step.mayGo() ? DeleteControl.defaultDelete() : keep(step.recheck());
    }
    ReleasePlan plan = planner.plan(block, memory, now);
    if (plan instanceof ReleasePlan.Release release) {
      return steps.letGo(block, release.round())
          ? DeleteControl.defaultDelete()
          : keep(Optional.of(steps.recheck()));
    }
    if (plan instanceof ReleasePlan.Request request) {
      steps.request(block, request.reason(), now);
    } else if (plan instanceof ReleasePlan.Clear clear) {
      steps.clear(block, clear.round(), now);
    } else if (plan instanceof ReleasePlan.Ignore ignore) {
      steps.ignore(block, ignore.why());
    } else if (plan instanceof ReleasePlan.Wait wait) {
      steps.reportRefusal(block);
      return keep(Optional.of(wait.recheck()).filter(d -> !d.isZero()));
    }
    return keep(Optional.empty());
  }

  private static DeleteControl keep(Optional<Duration> recheck) {
    DeleteControl keep = DeleteControl.noFinalizerRemoval();
    return recheck.map(d -> keep.rescheduleAfter(d.toMillis())).orElse(keep);
  }

  /**
   * @param remaining how long the grace period still runs
   */
  private record NodeAbsence(Duration remaining) {
    boolean graceOver() {
      return remaining.isZero() || remaining.isNegative();
    }
  }

  /**
   * Whether the block's Node is gone — absent from the cache and from a fresh read — and for how
   * much longer the grace period runs. A live daemon of a node whose Node object went stops
   * allocating; asking it for the block (a round) closes the block at once if it still runs.
   */
  private Optional<NodeAbsence> nodeAbsence(IPBlock block, Context<IPBlock> context, Instant now) {
    String uid = block.getMetadata().getUid();
    String node = block.getSpec().getNode();
    if (node == null
        || nodeCached(block, context)
        || context.getClient().nodes().withName(node).get() != null) {
      memory.nodePresent(uid);
      return Optional.empty();
    }
    if (block.getStatus() == null || block.getStatus().getRelease() == null) {
      steps.request(block, "node " + node + " no longer exists", now);
    }
    Instant since = memory.nodeGoneSince(uid, now);
    return Optional.of(new NodeAbsence(Duration.between(now, since.plus(nodeGoneGrace))));
  }

  /** The block carries a Ready answer its holder wrote: the handshake decides, not the absence. */
  private static boolean answeredReady(IPBlock block) {
    var release = block.getStatus() == null ? null : block.getStatus().getRelease();
    return release != null
        && release.getState() == ReleaseState.Ready
        && release.getRequestedAt() != null
        && release.getRespondedAt() != null;
  }

  private static UpdateControl<IPBlock> recheckAfter(Optional<Duration> recheck) {
    return recheck
        .map(d -> UpdateControl.<IPBlock>noUpdate().rescheduleAfter(d.toMillis()))
        .orElseGet(UpdateControl::noUpdate);
  }

  private static Set<String> demand(Node node) {
    return DemandAnnotation.pools(node.getMetadata().getAnnotations());
  }

  private static Set<String> slotDemand(Node node) {
    return DemandAnnotation.slots(node.getMetadata().getAnnotations());
  }

  /** The IPBlock name of a slot demand {@code <pool>@<cidr>}. */
  private static String slotName(String slotDemand) {
    int at = slotDemand.indexOf('@');
    return ResourceNames.blockName(
        slotDemand.substring(0, at), Cidr.parse(slotDemand.substring(at + 1)));
  }

  /**
   * The nodes other than its holder that asked for this Exclusive slot to become Shared (a chosen
   * address lies in it), when no conversion of it is asked for yet; empty otherwise.
   */
  private static Set<String> slotWantedBy(IPBlock block, Context<IPBlock> context, Instant now) {
    if (block.getSpec().getNode() == null
        || Blocks.subClaim(block)
        || Blocks.shared(block)
        || SlotConversion.asked(block)
        || block.getMetadata().getDeletionTimestamp() != null) {
      return Set.of();
    }
    Optional<String> pool = Blocks.poolOf(block);
    if (pool.isEmpty()) {
      return Set.of();
    }
    Set<String> wanting =
        nodesBy(
            context,
            BY_SLOT_DEMAND,
            DemandAnnotation.slot(pool.get(), block.getSpec().getCidr()),
            now);
    wanting.remove(block.getSpec().getNode());
    return wanting;
  }

  /** The names of the cached Nodes that the index {@code index} files under {@code key}. */
  @SuppressWarnings("unchecked")
  private static Set<String> nodesBy(
      Context<IPBlock> context, String index, String key, Instant now) {
    var nodes =
        (InformerEventSource<Node, IPBlock>)
            context.eventSourceRetriever().getEventSourceFor(Node.class, NODES);
    return nodes.byIndex(index, key).stream()
        .filter(n -> LiveDemand.live(n.getMetadata().getAnnotations(), now))
        .map(n -> n.getMetadata().getName())
        .collect(java.util.stream.Collectors.toCollection(java.util.HashSet::new));
  }

  /**
   * The Nodes that record demand for the block's pool, from the cache, whose daemon still renews it
   * ({@link LiveDemand}).
   */
  private static Set<String> demanding(IPBlock block, Context<IPBlock> context, Instant now) {
    Optional<String> pool = Blocks.poolOf(block);
    if (pool.isEmpty()) {
      return Set.of();
    }
    return nodesBy(context, BY_DEMAND, pool.get(), now);
  }

  /** Whether the block's Node is in the cache; its absence is confirmed by a fresh read. */
  @SuppressWarnings("unchecked")
  private static boolean nodeCached(IPBlock block, Context<IPBlock> context) {
    var nodes =
        (InformerEventSource<Node, IPBlock>)
            context.eventSourceRetriever().getEventSourceFor(Node.class, NODES);
    return nodes.get(new ResourceID(block.getSpec().getNode())).isPresent();
  }

  private Optional<IPPool> pool(IPBlock block) {
    return Blocks.poolOf(block).flatMap(caches::pool);
  }

  private void prune(Context<IPBlock> context, Instant now) {
    if (Duration.between(lastPrune, now).compareTo(PRUNE_EVERY) < 0) {
      return;
    }
    lastPrune = now;
    memory.retainOnly(
        context.getPrimaryCache().list().map(b -> b.getMetadata().getUid()).collect(toSet()));
  }
}
