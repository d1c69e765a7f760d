package io.kipam.operator.block;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ReleasePlannerTest {

  private static final Duration IDLE = Duration.ofMinutes(5);
  private static final Duration RETRY = Duration.ofMinutes(1);
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final ReleasePlanner planner = new ReleasePlanner(IDLE, RETRY);
  private final HandshakeMemory memory = new HandshakeMemory();

  private static IPBlock block(Long allocated, BlockRelease release) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("p.10-0-0-0-28").withUid("u1").build());
    block.setSpec(new IPBlockSpec("p", "10.0.0.0/28", "node-a"));
    IPBlockStatus status = new IPBlockStatus();
    status.setAllocated(allocated);
    status.setRelease(release);
    block.setStatus(status);
    return block;
  }

  private static BlockRelease release(ReleaseState state, String requestedAt, String respondedAt) {
    BlockRelease release = new BlockRelease();
    release.setState(state);
    release.setRequestedAt(requestedAt);
    release.setRespondedAt(respondedAt);
    release.setReason("why");
    return release;
  }

  @Test
  void anEmptyBlockIsAskedForOnlyAfterTheIdleDelay() {
    IPBlock empty = block(0L, null);

    assertThat(planner.plan(empty, memory, T0)).isEqualTo(new ReleasePlan.Wait(IDLE));
    assertThat(planner.plan(empty, memory, T0.plusSeconds(60)))
        .isEqualTo(new ReleasePlan.Wait(IDLE.minusSeconds(60)));
    assertThat(planner.plan(empty, memory, T0.plus(IDLE))).isInstanceOf(ReleasePlan.Request.class);
  }

  @Test
  void anEmptyBlockOverItsNodesLimitIsAskedForAtOnceAndOnlyWhenEmpty() {
    java.util.Optional<String> excess = java.util.Optional.of("over the limit");

    assertThat(planner.plan(block(0L, null), memory, T0, excess))
        .isEqualTo(new ReleasePlan.Request("over the limit"));
    assertThat(planner.plan(block(3L, null), memory, T0, excess))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));
    assertThat(planner.plan(block(null, null), memory, T0, excess))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));
  }

  @Test
  void aBlockWhoseDaemonHasNotReportedIsNeverAskedForAsIdle() {
    assertThat(planner.plan(block(null, null), memory, T0))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));
    assertThat(planner.plan(block(null, null), memory, T0.plus(IDLE).plus(IDLE)))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));
    IPBlock noStatus = block(null, null);
    noStatus.setStatus(null);
    assertThat(planner.plan(noStatus, memory, T0.plus(Duration.ofDays(1))))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));
  }

  @Test
  void theIdleClockStartsWhenTheDaemonFirstReportsTheBlockEmpty() {
    planner.plan(block(null, null), memory, T0);

    assertThat(planner.plan(block(0L, null), memory, T0.plus(IDLE)))
        .isEqualTo(new ReleasePlan.Wait(IDLE));
  }

  @Test
  void aBlockBeingDeletedIsAskedForAtOnceWhateverItHolds() {
    IPBlock deleting = block(5L, null);
    deleting.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");

    assertThat(planner.plan(deleting, memory, T0)).isInstanceOf(ReleasePlan.Request.class);
  }

  @Test
  void anAllocationRestartsTheIdleClock() {
    planner.plan(block(0L, null), memory, T0);
    assertThat(planner.plan(block(2L, null), memory, T0.plusSeconds(100)))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));

    assertThat(planner.plan(block(0L, null), memory, T0.plus(IDLE)))
        .as("empty again since T0 + 5 min")
        .isEqualTo(new ReleasePlan.Wait(IDLE));
  }

  @Test
  void whileRequestedTheOperatorWaitsForTheAnswer() {
    IPBlock requested = block(0L, release(ReleaseState.Requested, "r1", null));

    assertThat(planner.plan(requested, memory, T0.plus(Duration.ofDays(1))))
        .isEqualTo(new ReleasePlan.Wait(Duration.ZERO));
  }

  @Test
  void aReadyAnswerToARoundIsActedOn() {
    IPBlock ready = block(0L, release(ReleaseState.Ready, "r1", "t1"));

    assertThat(planner.plan(ready, memory, T0)).isEqualTo(new ReleasePlan.Release("r1"));
  }

  @Test
  void aReadyAnswerToARoundThisOperatorDoesNotRememberIsActedOn() {
    // Asked by an earlier leader, or by this operator before it restarted.
    HandshakeMemory restarted = new HandshakeMemory();

    assertThat(planner.plan(block(0L, release(ReleaseState.Ready, "r0", "t1")), restarted, T0))
        .isEqualTo(new ReleasePlan.Release("r0"));
  }

  @Test
  void aReadyWithoutItsRoundOrAnswerTimeIsWithdrawnAfterTheBackOff() {
    IPBlock noRound = block(0L, release(ReleaseState.Ready, null, "t1"));
    IPBlock noAnswerTime = block(0L, release(ReleaseState.Ready, "r1", null));

    assertThat(planner.plan(noRound, memory, T0)).isEqualTo(new ReleasePlan.Wait(RETRY));
    assertThat(planner.plan(noRound, memory, T0.plus(RETRY))).isInstanceOf(ReleasePlan.Clear.class);
    assertThat(planner.plan(noAnswerTime, new HandshakeMemory(), T0))
        .isEqualTo(new ReleasePlan.Wait(RETRY));
    assertThat(planner.plan(block(0L, release(null, "r1", "t1")), memory, T0))
        .isInstanceOf(ReleasePlan.Ignore.class);
  }

  @Test
  void aRefusalIsClearedAfterTheBackOffCountedFromWhenTheOperatorSawIt() {
    IPBlock refused = block(3L, release(ReleaseState.Refused, "r1", "1999-01-01T00:00:00Z"));

    assertThat(planner.plan(refused, memory, T0)).isEqualTo(new ReleasePlan.Wait(RETRY));
    assertThat(planner.plan(refused, memory, T0.plusSeconds(59)))
        .isEqualTo(new ReleasePlan.Wait(Duration.ofSeconds(1)));
    assertThat(planner.plan(refused, memory, T0.plus(RETRY)))
        .isEqualTo(new ReleasePlan.Clear("r1", "why"));
  }

  @Test
  void aNewRefusalHasABackOffOfItsOwn() {
    planner.plan(block(0L, release(ReleaseState.Refused, "r1", "t")), memory, T0);

    IPBlock second = block(0L, release(ReleaseState.Refused, "r2", "t"));
    assertThat(planner.plan(second, memory, T0.plus(RETRY))).isEqualTo(new ReleasePlan.Wait(RETRY));
  }

  @Test
  void aForgetfulOperatorOnlyWaitsLonger() {
    IPBlock empty = block(0L, null);
    planner.plan(empty, memory, T0);

    HandshakeMemory restarted = new HandshakeMemory();
    assertThat(planner.plan(empty, restarted, T0.plus(IDLE)))
        .as("a restarted operator counts the idle delay from when it first saw the block")
        .isEqualTo(new ReleasePlan.Wait(IDLE));
  }
}
