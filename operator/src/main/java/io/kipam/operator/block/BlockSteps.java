package io.kipam.operator.block;

import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.EventRecorder;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a {@link ReleasePlan} (and the rule for deleted Nodes) through {@link BlockReleaser},
 * and reports each outcome: a log line, a metric and an Event on the block. Events about a state
 * that lasts (a refusal, a Ready blocked by an address) are written once per block and round, not
 * on every reconcile.
 */
final class BlockSteps {

  private static final Logger log = LoggerFactory.getLogger(BlockSteps.class);

  private final BlockReleaser releaser;
  private final HandshakeMemory memory;
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Duration recheck;

  BlockSteps(
      BlockReleaser releaser,
      HandshakeMemory memory,
      EventRecorder events,
      OperatorMetrics metrics,
      Duration recheck) {
    this.releaser = releaser;
    this.memory = memory;
    this.events = events;
    this.metrics = metrics;
    this.recheck = recheck;
  }

  Duration recheck() {
    return recheck;
  }

  /**
   * Whether a Shared slot being deleted may go: no sub-claim under it and no IPAddress of it on a
   * fresh read. A daemon re-reads the parent after each sub-claim it creates and gives the
   * sub-claim back when the parent is being deleted, so one of the two sides always sees the other.
   */
  boolean sharedSlotMayGo(IPBlock slot) {
    if (!releaser.sharedSlotUnused(slot)) {
      log.info(
          "Shared IPBlock {} is being deleted; it stays while a sub-claim or IPAddress of it exists",
          slot.getMetadata().getName());
      return false;
    }
    events.record(
        slot,
        EventRecorder.Type.Normal,
        "Released",
        "no sub-claim and no IPAddress of the Shared slot is left: it goes");
    metrics.release("released");
    return true;
  }

  /** Asks for the block back; false when the write conflicted (nothing was asked). */
  boolean request(IPBlock block, String reason, Instant now) {
    return releaser.request(block, reason, now).isPresent();
  }

  /** Asks the slot to become Shared; false when the write conflicted (nothing was asked). */
  boolean requestShare(IPBlock slot, String reason, Instant now) {
    return releaser.requestShare(slot, reason, now);
  }

  void clear(IPBlock block, String round, Instant now) {
    reportRefusal(block);
    if (releaser.clear(block, round)) {
      memory.restartIdle(block.getMetadata().getUid(), now);
    }
  }

  void ignore(IPBlock block, String why) {
    if (memory.firstReport(block.getMetadata().getUid(), "Ignored:" + why)) {
      log.warn("IPBlock {}: ignoring status.release: {}", block.getMetadata().getName(), why);
      events.record(
          block,
          EventRecorder.Type.Warning,
          "ReleaseAnswerIgnored",
          "status.release is not an answer the operator acts on: " + why);
    }
  }

  /**
   * Acts on a Ready answer to {@code round} of a block not yet being deleted: deletes it after the
   * fresh checks, so that it is closed on its node for good; {@link #letGo} then lets it go.
   * Returns when to look again, if at all.
   */
  Optional<Duration> release(IPBlock block, String round) {
    return switch (releaser.deleteIfUnused(block, fresh -> readyFor(fresh, round))) {
      case DELETED, MAY_GO -> {
        log.info(
            "deleting IPBlock {} of node {}: it answered Ready to round {}",
            block.getMetadata().getName(),
            block.getSpec().getNode(),
            round);
        yield Optional.empty();
      }
      case IN_USE -> inUse(block, round);
      case CHANGED -> Optional.empty(); // the next event about the block decides again
    };
  }

  /**
   * Whether a block being deleted whose node answered Ready to {@code round} may go now (its
   * finalizer removed): a fresh read still shows that answer and no IPAddress of it exists.
   */
  boolean letGo(IPBlock block, String round) {
    return switch (releaser.mayGo(block, fresh -> readyFor(fresh, round))) {
      case MAY_GO, DELETED -> {
        String node = block.getSpec().getNode();
        log.info(
            "released IPBlock {} of node {} (round {})",
            block.getMetadata().getName(),
            node,
            round);
        metrics.release("released");
        events.record(
            block,
            EventRecorder.Type.Normal,
            "Released",
            "node " + node + " answered Ready and no IPAddress references the block: it goes");
        yield true;
      }
      case IN_USE -> {
        inUse(block, round);
        yield false;
      }
      case CHANGED -> false;
    };
  }

  private Optional<Duration> inUse(IPBlock block, String round) {
    String name = block.getMetadata().getName();
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
    return Optional.of(recheck);
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

  /**
   * Takes back a block whose Node the cache and a fresh read both say has been gone for the grace
   * period, without its daemon's answer: deletes it, or, if it is being deleted already, reports
   * whether it may go. Either only when a fresh read shows it on that node and no IPAddress
   * references it. Returns whether the block may go now, and when to look again, if at all.
   */
  NodeGoneStep nodeGone(IPBlock block) {
    String node = block.getSpec().getNode();
    String name = block.getMetadata().getName();
    boolean deleting = block.getMetadata().getDeletionTimestamp() != null;
    Predicate<IPBlock> sameNode = fresh -> node.equals(fresh.getSpec().getNode());
    var outcome =
        deleting ? releaser.mayGo(block, sameNode) : releaser.deleteIfUnused(block, sameNode);
    switch (outcome) {
      case DELETED -> {
        log.info(
            "deleting IPBlock {}: its node {} is gone and no IPAddress references it", name, node);
        return new NodeGoneStep(false, Optional.empty());
      }
      case MAY_GO -> {
        log.info("IPBlock {} goes: its node {} is gone and no IPAddress references it", name, node);
        metrics.release("node_gone");
        events.record(
            block,
            EventRecorder.Type.Normal,
            "NodeGone",
            "node " + node + " no longer exists and no IPAddress references the block: it goes");
        return new NodeGoneStep(true, Optional.empty());
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
        return new NodeGoneStep(false, Optional.of(recheck));
      }
      default -> {
        return new NodeGoneStep(false, Optional.empty());
      }
    }
  }

  /**
   * @param mayGo the block being deleted may go now
   * @param recheck when to look again, if at all
   */
  record NodeGoneStep(boolean mayGo, Optional<Duration> recheck) {}

  /** Reports a refusal the first time it is seen. */
  void reportRefusal(IPBlock block) {
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
}
