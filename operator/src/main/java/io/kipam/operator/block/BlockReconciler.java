package io.kipam.operator.block;

import static java.util.stream.Collectors.toSet;

import io.fabric8.kubernetes.api.model.Node;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.PreconditionedDelete;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's half of each IPBlock's life after its claim: the release handshake with the
 * holding node's daemon ({@link ReleasePlanner} decides, {@link BlockReleaser} writes), and
 * reclaiming a block whose Node object is gone once no IPAddress references it. Every status change
 * of a block is an event here (the daemon's {@code allocated} and answers live in the status), and
 * so is the deletion of a Node, which maps to that node's blocks.
 */
@ControllerConfiguration(name = BlockReconciler.NAME, generationAwareEventProcessing = false)
public final class BlockReconciler implements Reconciler<IPBlock> {

  public static final String NAME = "ipblock";
  private static final String NODES = "block-nodes";
  private static final String POOLS = "block-pools";
  private static final String BY_NODE = "kipam-block-by-node";
  private static final String BY_POOL = "kipam-block-by-pool";
  private static final Duration PRUNE_EVERY = Duration.ofMinutes(5);
  private static final Logger log = LoggerFactory.getLogger(BlockReconciler.class);

  private final Clock clock;
  private final ReleasePlanner planner;
  private final HandshakeMemory memory = new HandshakeMemory();
  private final LayoutCache layouts = new LayoutCache();
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Duration recheck;
  private final AddressLookup addresses;
  private final PreconditionedDelete delete;
  private volatile Instant lastPrune = Instant.EPOCH;

  public BlockReconciler(
      Clock clock,
      Duration idleDelay,
      Duration retryDelay,
      Duration recheck,
      EventRecorder events,
      OperatorMetrics metrics,
      AddressLookup addresses,
      PreconditionedDelete delete) {
    this.clock = clock;
    this.planner = new ReleasePlanner(idleDelay, retryDelay);
    this.recheck = recheck;
    this.events = events;
    this.metrics = metrics;
    this.addresses = addresses;
    this.delete = delete;
  }

  @Override
  public List<EventSource<?, IPBlock>> prepareEventSources(EventSourceContext<IPBlock> context) {
    var blocks = context.getPrimaryCache();
    blocks.addIndexer(
        BY_NODE,
        b ->
            b.getSpec() == null || b.getSpec().getNode() == null
                ? List.of()
                : List.of(b.getSpec().getNode()));
    blocks.addIndexer(BY_POOL, b -> Blocks.poolOf(b).map(List::of).orElse(List.of()));
    // Pools are only looked up (for their layout when one is short); they trigger nothing here.
    var pools =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(IPPool.class, IPBlock.class)
                .withName(POOLS)
                .withSecondaryToPrimaryMapper((IPPool pool) -> Set.<ResourceID>of())
                .build(),
            context);
    // Only a Node's arrival and deletion matter here; its frequent status updates do not.
    var nodes =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Node.class, IPBlock.class)
                .withName(NODES)
                .withSecondaryToPrimaryMapper(
                    (Node node) ->
                        blocks.byIndex(BY_NODE, node.getMetadata().getName()).stream()
                            .map(ResourceID::fromResource)
                            .collect(toSet()))
                .withOnUpdateFilter((before, after) -> false)
                .build(),
            context);
    return List.of(nodes, pools);
  }

  @Override
  public UpdateControl<IPBlock> reconcile(IPBlock block, Context<IPBlock> context) {
    Instant now = clock.instant();
    prune(context, now);
    if (block.getMetadata().getDeletionTimestamp() != null || block.getSpec() == null) {
      return UpdateControl.noUpdate();
    }
    BlockReleaser releaser =
        new BlockReleaser(context.getClient(), addresses, delete, events, metrics);
    if (!nodeExists(block, context)) {
      return nodeGone(block, releaser, context);
    }
    String uid = block.getMetadata().getUid();
    ReleasePlan plan = planner.plan(block, memory, now);
    if (plan instanceof ReleasePlan.Wait wait) {
      reportRefusal(block);
      relievePressure(block, releaser, context, now);
      return wait.recheck().isZero()
          ? UpdateControl.noUpdate()
          : UpdateControl.<IPBlock>noUpdate().rescheduleAfter(wait.recheck().toMillis());
    }
    if (plan instanceof ReleasePlan.Request request) {
      releaser.request(block, request.reason(), now).ifPresent(r -> memory.asked(uid, r));
    } else if (plan instanceof ReleasePlan.Clear clear) {
      reportRefusal(block);
      if (releaser.clear(block, clear.round())) {
        memory.restartIdle(uid, now);
      }
    } else if (plan instanceof ReleasePlan.Release release) {
      return releaseOnReady(block, release.round(), releaser);
    } else if (plan instanceof ReleasePlan.Ignore ignore
        && memory.firstReport(uid, "Ignored:" + ignore.why())) {
      log.warn(
          "IPBlock {}: ignoring status.release: {}", block.getMetadata().getName(), ignore.why());
      events.record(
          block,
          EventRecorder.Type.Warning,
          "ReleaseAnswerIgnored",
          "status.release is not an answer the operator acts on: " + ignore.why());
    }
    return UpdateControl.noUpdate();
  }

  private UpdateControl<IPBlock> releaseOnReady(
      IPBlock block, String round, BlockReleaser releaser) {
    String name = block.getMetadata().getName();
    BlockReleaser.Outcome outcome = releaser.deleteIfUnused(block, fresh -> readyFor(fresh, round));
    switch (outcome) {
      case DELETED -> {
        log.info(
            "released IPBlock {} of node {} (round {})", name, block.getSpec().getNode(), round);
        metrics.release("released");
        events.record(
            block,
            EventRecorder.Type.Normal,
            "Released",
            "node "
                + block.getSpec().getNode()
                + " answered Ready and no IPAddress references the block: deleted it");
      }
      case IN_USE -> {
        if (memory.firstReport(block.getMetadata().getUid(), "Blocked:" + round)) {
          log.warn("IPBlock {} answered Ready but an IPAddress still references it", name);
          metrics.release("blocked");
          events.record(
              block,
              EventRecorder.Type.Warning,
              "ReleaseBlocked",
              "node "
                  + block.getSpec().getNode()
                  + " answered Ready, but an IPAddress still references the block: it stays"
                  + " until none does");
        }
        return UpdateControl.<IPBlock>noUpdate().rescheduleAfter(recheck.toMillis());
      }
      case CHANGED -> {
        // The next event about the block decides again.
      }
    }
    return UpdateControl.noUpdate();
  }

  /**
   * When this block's node is short in its pool ({@link PoolPressure}), asks at once for an empty
   * block of another node, so that capacity moves to where it is needed.
   */
  private void relievePressure(
      IPBlock block, BlockReleaser releaser, Context<IPBlock> context, Instant now) {
    if (Blocks.allocated(block) == 0) {
      return;
    }
    String poolName = Blocks.poolOf(block).orElse(null);
    @SuppressWarnings("unchecked")
    var pools =
        (InformerEventSource<IPPool, IPBlock>)
            context.eventSourceRetriever().getEventSourceFor(IPPool.class, POOLS);
    IPPool pool = poolName == null ? null : pools.get(new ResourceID(poolName)).orElse(null);
    if (pool == null || pool.getMetadata().getDeletionTimestamp() != null) {
      return;
    }
    PoolLayout layout;
    try {
      layout = layouts.of(pool);
    } catch (IllegalArgumentException e) {
      return;
    }
    if (!PoolPressure.full(block, layout)) {
      return;
    }
    List<IPBlock> siblings =
        context.getPrimaryCache().byIndex(BY_POOL, poolName).stream()
            .filter(b -> Blocks.belongsTo(b, pool))
            .toList();
    String node = block.getSpec().getNode();
    PoolPressure.donorFor(node, layout, siblings)
        .ifPresent(
            donor ->
                releaser
                    .request(
                        donor,
                        "IPPool "
                            + poolName
                            + " is short: node "
                            + node
                            + " has no free address in its blocks and no block is left to claim",
                        now)
                    .ifPresent(round -> memory.asked(donor.getMetadata().getUid(), round)));
  }

  /** The fresh block still carries a Ready answer to {@code round} and reports no allocation. */
  private static boolean readyFor(IPBlock fresh, String round) {
    BlockRelease release = fresh.getStatus() == null ? null : fresh.getStatus().getRelease();
    return release != null
        && release.getState() == ReleaseState.Ready
        && Objects.equals(release.getRequestedAt(), round)
        && release.getRespondedAt() != null
        && Blocks.allocated(fresh) == 0;
  }

  private UpdateControl<IPBlock> nodeGone(
      IPBlock block, BlockReleaser releaser, Context<IPBlock> context) {
    String node = block.getSpec().getNode();
    String name = block.getMetadata().getName();
    // The cache says the Node is gone; the API server must say so too.
    if (context.getClient().nodes().withName(node).get() != null) {
      return UpdateControl.noUpdate();
    }
    BlockReleaser.Outcome outcome =
        releaser.deleteIfUnused(block, fresh -> node.equals(fresh.getSpec().getNode()));
    switch (outcome) {
      case DELETED -> {
        log.info(
            "deleted IPBlock {}: its node {} is gone and no IPAddress references it", name, node);
        metrics.release("node_gone");
        events.record(
            block,
            EventRecorder.Type.Normal,
            "NodeGone",
            "node " + node + " no longer exists and no IPAddress references the block: deleted it");
        return UpdateControl.noUpdate();
      }
      case IN_USE -> {
        if (memory.firstReport(block.getMetadata().getUid(), "NodeGoneInUse")) {
          events.record(
              block,
              EventRecorder.Type.Normal,
              "NodeGone",
              "node "
                  + node
                  + " no longer exists; the block stays until no IPAddress references it");
        }
        return UpdateControl.<IPBlock>noUpdate().rescheduleAfter(recheck.toMillis());
      }
      default -> {
        return UpdateControl.noUpdate();
      }
    }
  }

  private void reportRefusal(IPBlock block) {
    BlockRelease release = block.getStatus() == null ? null : block.getStatus().getRelease();
    if (release == null || release.getState() != ReleaseState.Refused) {
      return;
    }
    if (memory.firstReport(block.getMetadata().getUid(), "Refused:" + release.getRequestedAt())) {
      log.info(
          "node {} refused to give back IPBlock {}: {}",
          block.getSpec().getNode(),
          block.getMetadata().getName(),
          release.getReason());
      metrics.release("refused");
      events.record(
          block,
          EventRecorder.Type.Normal,
          "ReleaseRefused",
          "node "
              + block.getSpec().getNode()
              + " refused to give the block back ("
              + release.getReason()
              + "); the operator may ask again later");
    }
  }

  @SuppressWarnings("unchecked")
  private static boolean nodeExists(IPBlock block, Context<IPBlock> context) {
    var nodes =
        (InformerEventSource<Node, IPBlock>)
            context.eventSourceRetriever().getEventSourceFor(Node.class, NODES);
    return nodes.get(new ResourceID(block.getSpec().getNode())).isPresent();
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
