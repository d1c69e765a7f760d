package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.runtime.Checkpoint;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node daemon's half of the block release handshake. For each of this node's blocks whose
 * release kipam-operator has {@code Requested}, {@link #respond} answers {@code Ready} when nothing
 * in the block is held, reserved, uncertain or resting after its release (the block stays closed,
 * and the operator may delete it), and {@code Refused}, naming how many addresses are in use, when
 * something is held (the block opens again once the answer is written). While only resting
 * addresses are left it does not answer yet: the block stays closed until they have rested, so an
 * address released here is not handed out at once on the node the block moves to.
 *
 * <p>A Ready answer the operator has not acted on for {@code abandonAfter} (this node's clock) is
 * taken back: the answer becomes {@code Refused}, and the block opens again, so a block is not
 * closed for good when no operator comes back to the round. A block being deleted is never opened
 * again.
 *
 * <p>The decision is taken under the ledger's monitor, the answer written outside it with the
 * block's resourceVersion as precondition: when the block changed meanwhile (the operator deleting
 * it, say), the answer is decided again on its new state. A request is answered once; a write that
 * failed is tried again on the next call.
 */
public final class ReleaseResponder {

  private static final Logger log = LoggerFactory.getLogger(ReleaseResponder.class);

  private final Ledger ledger;
  private final BlockStatusStore store;
  private final Clock clock;
  private final Duration abandonAfter;

  public ReleaseResponder(
      Ledger ledger, BlockStatusStore store, Clock clock, Duration abandonAfter) {
    this.ledger = ledger;
    this.store = store;
    this.clock = clock;
    this.abandonAfter = abandonAfter;
  }

  /**
   * Answers every pending release request of this node's blocks, and takes back Ready answers the
   * operator has abandoned.
   */
  public synchronized void respond() {
    if (!ledger.synced()) {
      return; // "empty" means nothing until the node's allocations are known
    }
    for (ReleaseDecision decision : ledger.blocks().pendingReleases()) {
      if (!decision.waiting()) {
        answer(decision.block(), decision.ready(), refusal(decision));
      }
    }
    for (BlockObject abandoned : ledger.blocks().abandonedReleases(abandonAfter)) {
      answer(
          abandoned,
          false,
          "kipam-operator did not act on the Ready answer within "
              + abandonAfter.toSeconds()
              + "s; the block is open again on node "
              + ledger.node());
    }
  }

  private String refusal(ReleaseDecision decision) {
    return decision.inUse()
        + " of its addresses are in use on node "
        + ledger.node()
        + " (held, being allocated, or awaiting a check)";
  }

  private void answer(BlockObject block, boolean ready, String refusal) {
    BlockRef ref = block.ref();
    ReleaseState state = ready ? ReleaseState.Ready : ReleaseState.Refused;
    String reason = ready ? null : refusal;
    String respondedAt = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    if (ready) {
      Checkpoint.reach("daemon-closed", ref.pool());
    }
    String version;
    try {
      version =
          store.answerRelease(
              ref,
              block.resourceVersion(),
              new BlockStatusStore.ReleaseAnswer(state, block.requestedAt(), respondedAt, reason));
    } catch (RuntimeException e) {
      log.warn(
          "cannot answer the release request of block {} of pool {} yet: {}",
          ref.cidr(),
          ref.pool(),
          e.toString());
      return;
    }
    if (version == null) {
      log.info(
          "block {} of pool {} changed before its release answer was written; deciding again",
          ref.cidr(),
          ref.pool());
      return;
    }
    ledger
        .blocks()
        .releaseAnswered(
            block,
            new BlockObject(
                ref,
                version,
                true,
                state,
                block.requestedAt(),
                block.allocated(),
                block.deleting(),
                block.shared(),
                block.shareRequestedAt()));
    if (ready) {
      Checkpoint.reach("daemon-answered", ref.pool());
    }
    log.info(
        "answered the release request of block {} of pool {} (requested at {}): {}{}",
        ref.cidr(),
        ref.pool(),
        block.requestedAt(),
        state,
        reason == null ? "" : ", " + reason);
  }
}
