package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node daemon's half of the block release handshake. For each of this node's blocks whose
 * release kipam-operator has {@code Requested}, {@link #respond} answers {@code Ready} when nothing
 * in the block is held, reserved or uncertain (the block stays closed, and the operator may delete
 * it), and {@code Refused}, naming how many addresses are in use, otherwise (the block opens again
 * once the answer is written). The decision is taken under the ledger's monitor, the answer written
 * outside it with the block's resourceVersion as precondition: when the block changed meanwhile,
 * the answer is decided again on its new state. A request is answered once; a write that failed is
 * tried again on the next call.
 */
public final class ReleaseResponder {

  private static final Logger log = LoggerFactory.getLogger(ReleaseResponder.class);

  private final Ledger ledger;
  private final BlockStatusStore store;
  private final Clock clock;

  public ReleaseResponder(Ledger ledger, BlockStatusStore store, Clock clock) {
    this.ledger = ledger;
    this.store = store;
    this.clock = clock;
  }

  /** Answers every pending release request of this node's blocks. */
  public synchronized void respond() {
    if (!ledger.synced()) {
      return; // "empty" means nothing until the node's allocations are known
    }
    for (Ledger.ReleaseDecision decision : ledger.pendingReleases()) {
      answer(decision);
    }
  }

  private void answer(Ledger.ReleaseDecision decision) {
    BlockObject block = decision.block();
    BlockRef ref = block.ref();
    ReleaseState state = decision.ready() ? ReleaseState.Ready : ReleaseState.Refused;
    String reason =
        decision.ready()
            ? null
            : decision.inUse()
                + " of its addresses are in use on node "
                + ledger.node()
                + " (held, being allocated, or awaiting a check)";
    String respondedAt = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
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
    ledger.releaseAnswered(
        block, new BlockObject(ref, version, true, state, block.requestedAt(), block.allocated()));
    log.info(
        "answered the release request of block {} of pool {} (requested at {}): {}{}",
        ref.cidr(),
        ref.pool(),
        block.requestedAt(),
        state,
        reason == null ? "" : ", " + reason);
  }
}
