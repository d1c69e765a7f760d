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
 *   <li>No release: a block whose {@code status.allocated} has been 0 (or absent) for the idle
 *       delay is asked for ({@link ReleasePlan.Request}); until then the planner waits out the rest
 *       of the delay.
 *   <li>{@code Requested}: the daemon's turn; wait for its answer (an event).
 *   <li>{@code Ready}: an answer to a round ({@code requestedAt} kept, {@code respondedAt} set) is
 *       acted on ({@link ReleasePlan.Release}), unless this operator remembers asking for another
 *       round. A Ready without its round is ignored: only a fresh Ready to a round lets a block go.
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
    String uid = block.getMetadata().getUid();
    BlockRelease release = block.getStatus() == null ? null : block.getStatus().getRelease();
    if (release == null) {
      if (Blocks.allocated(block) > 0) {
        memory.busy(uid);
        return new ReleasePlan.Wait(Duration.ZERO);
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
      case Ready -> ready(uid, release, memory);
      case Refused -> refused(uid, release, memory, now);
    };
  }

  private static ReleasePlan ready(String uid, BlockRelease release, HandshakeMemory memory) {
    String round = release.getRequestedAt();
    if (round == null || release.getRespondedAt() == null) {
      return new ReleasePlan.Ignore("a Ready answer without requestedAt and respondedAt");
    }
    Optional<String> asked = memory.askedRound(uid);
    if (asked.isPresent() && !asked.get().equals(round)) {
      return new ReleasePlan.Ignore(
          "a Ready answer to round " + round + ", but the operator asked at " + asked.get());
    }
    return new ReleasePlan.Release(round);
  }

  private ReleasePlan refused(
      String uid, BlockRelease release, HandshakeMemory memory, Instant now) {
    String round = String.valueOf(release.getRequestedAt());
    Instant due = memory.refusalSeen(uid, round, now).plus(retryDelay);
    if (!now.isBefore(due)) {
      return new ReleasePlan.Clear(round, String.valueOf(release.getReason()));
    }
    return new ReleasePlan.Wait(Duration.between(now, due));
  }
}
