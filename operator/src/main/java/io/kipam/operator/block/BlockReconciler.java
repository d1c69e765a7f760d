package io.kipam.operator.block;

import static java.util.stream.Collectors.toSet;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.PreconditionedDelete;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The operator's half of each IPBlock's life after its claim: the release handshake with the
 * holding node's daemon ({@link ReleasePlanner} decides, {@link BlockSteps} carries out), moving an
 * empty block to a node that is short ({@link PressureRelief}), and reclaiming a block whose Node
 * object is gone once no IPAddress references it. Every status change of a block is an event here
 * (the daemon's {@code allocated} and answers live in the status), and so is the deletion of a
 * Node, which maps to that node's blocks.
 */
@ControllerConfiguration(name = BlockReconciler.NAME, generationAwareEventProcessing = false)
public final class BlockReconciler implements Reconciler<IPBlock> {

  public static final String NAME = "ipblock";
  private static final String NODES = "block-nodes";
  private static final String POOLS = "block-pools";
  private static final String BY_NODE = "kipam-block-by-node";
  private static final String BY_POOL = "kipam-block-by-pool";
  private static final Duration PRUNE_EVERY = Duration.ofMinutes(5);

  private final Clock clock;
  private final ReleasePlanner planner;
  private final HandshakeMemory memory = new HandshakeMemory();
  private final PressureRelief pressure = new PressureRelief();
  private final BlockSteps steps;
  private volatile Instant lastPrune = Instant.EPOCH;

  public BlockReconciler(
      Clock clock,
      Duration idleDelay,
      Duration retryDelay,
      Duration recheck,
      KubernetesClient client,
      AddressLookup addresses,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics) {
    this.clock = clock;
    this.planner = new ReleasePlanner(idleDelay, retryDelay);
    BlockReleaser releaser = new BlockReleaser(client, addresses, delete, events, metrics);
    this.steps = new BlockSteps(releaser, memory, events, metrics, recheck);
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
    // Pools are only looked up (their layout, when a block is full); they trigger nothing here.
    var pools =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(IPPool.class, IPBlock.class)
                .withName(POOLS)
                .withSecondaryToPrimaryMapper((IPPool pool) -> Set.<ResourceID>of())
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
    if (!nodeCached(block, context)
        && context.getClient().nodes().withName(block.getSpec().getNode()).get() == null) {
      return recheckAfter(steps.nodeGone(block));
    }
    ReleasePlan plan = planner.plan(block, memory, now);
    if (plan instanceof ReleasePlan.Wait wait) {
      steps.reportRefusal(block);
      pressure.relieve(
          block,
          pool(block, context),
          name -> context.getPrimaryCache().byIndex(BY_POOL, name),
          steps,
          now);
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

  private static UpdateControl<IPBlock> recheckAfter(Optional<Duration> recheck) {
    return recheck
        .map(d -> UpdateControl.<IPBlock>noUpdate().rescheduleAfter(d.toMillis()))
        .orElseGet(UpdateControl::noUpdate);
  }

  /** Whether the block's Node is in the cache; its absence is confirmed by a fresh read. */
  @SuppressWarnings("unchecked")
  private static boolean nodeCached(IPBlock block, Context<IPBlock> context) {
    var nodes =
        (InformerEventSource<Node, IPBlock>)
            context.eventSourceRetriever().getEventSourceFor(Node.class, NODES);
    return nodes.get(new ResourceID(block.getSpec().getNode())).isPresent();
  }

  @SuppressWarnings("unchecked")
  private static Optional<IPPool> pool(IPBlock block, Context<IPBlock> context) {
    var pools =
        (InformerEventSource<IPPool, IPBlock>)
            context.eventSourceRetriever().getEventSourceFor(IPPool.class, POOLS);
    return Blocks.poolOf(block).flatMap(name -> pools.get(new ResourceID(name)));
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
