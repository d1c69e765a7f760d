package io.kipam.operator.block;

import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.kube.Blocks;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Decides the operator's next step in the release handshake of one block, from the block as cached
 * and what {@link HandshakeMemory} holds. Pure: no API calls, so every state is tested in
 * microseconds.
 *
 * <ul>
 *   <li>No release: a block whose daemon has reported {@code status.allocated} 0 for the idle delay
 *       is asked for ({@link ReleasePlan.Request}); until then the planner waits out the rest of
 *       the delay; an empty block over its node's {@code maxBlocksPerNode} is asked for at once. A
 *       block without a count is unknown, not empty: it is never asked for as idle. A block being
 *       deleted is asked for at once, whatever it holds: its holder must close it.
 *   <li>{@code Requested}: the daemon's turn; wait for its answer (an event).
 *   <li>{@code Ready}: an answer to a round ({@code requestedAt} kept, {@code respondedAt} set) is
 *       acted on ({@link ReleasePlan.Release}), whoever asked for the round (this operator, an
 *       earlier leader, or one that has restarted since): the daemon's consent is the answer, and
 *       the release re-checks it against a fresh read. A Ready without its round or answer time is
 *       no consent; it is withdrawn after the back-off like a refusal, so the block does not stay
 *       closed.
 *   <li>{@code Refused}: after the back-off, counted from when this operator first saw the refusal
 *       (its own clock, never a node's), the release is cleared so a later round may ask again.
 * </ul>
 */
final class ReleasePlanner {

  private final Duration idleDelay;
  private final Duration retryDelay;

  ReleasePlanner(Duration idleDelay, Duration retryDelay) {
    this.idleDelay = idleDelay;
    this.retryDelay = retryDelay;
  }

  ReleasePlan plan(IPBlock block, HandshakeMemory memory, Instant now) {
    return plan(block, memory, now, Optional.empty());
  }

  /**
   * As above; {@code excess} says why the block, if empty, is asked for at once: one of its node's
   * slots over the pool's {@code spec.maxBlocksPerNode} ({@link BlockLimit}).
   */
  ReleasePlan plan(IPBlock block, HandshakeMemory memory, Instant now, Optional<String> excess) {
    String uid = block.getMetadata().getUid();
    boolean deleting = block.getMetadata().getDeletionTimestamp() != null;
    BlockRelease release = block.getStatus() == null ? null : block.getStatus().getRelease();
    if (release == null) {
      if (deleting) {
        return new ReleasePlan.Request("the block is being deleted");
      }
      Optional<Long> allocated = Blocks.reportedAllocated(block);
      if (allocated.isEmpty() || allocated.get() > 0) {
        memory.busy(uid);
        return new ReleasePlan.Wait(Duration.ZERO);
      }
      if (excess.isPresent()) {
        return new ReleasePlan.Request(excess.get());
      }
      Instant due = memory.idleSince(uid, now).plus(idleDelay);
      if (!now.isBefore(due)) {
        return new ReleasePlan.Request(
            "the block has been empty for at least " + idleDelay.toSeconds() + "s");
      }
      return new ReleasePlan.Wait(Duration.between(now, due));
    }
    ReleaseState state = release.getState();
    if (state == null) {
      return new ReleasePlan.Ignore("status.release has no state");
    }
    return switch (state) {
      case Requested -> new ReleasePlan.Wait(Duration.ZERO);
      case Ready -> ready(uid, release, memory, now);
      case Refused -> backOff(uid, release, String.valueOf(release.getReason()), memory, now);
    };
  }

  private ReleasePlan ready(String uid, BlockRelease release, HandshakeMemory memory, Instant now) {
    if (release.getRequestedAt() == null || release.getRespondedAt() == null) {
      return backOff(
          uid, release, "a Ready answer without requestedAt or respondedAt", memory, now);
    }
    return new ReleasePlan.Release(release.getRequestedAt());
  }

  private ReleasePlan backOff(
      String uid, BlockRelease release, String why, HandshakeMemory memory, Instant now) {
    String round = String.valueOf(release.getRequestedAt());
    Instant due = memory.refusalSeen(uid, round, now).plus(retryDelay);
    if (!now.isBefore(due)) {
      return new ReleasePlan.Clear(round, why);
    }
    return new ReleasePlan.Wait(Duration.between(now, due));
  }
}
