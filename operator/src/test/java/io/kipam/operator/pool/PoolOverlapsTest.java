package io.kipam.operator.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolOverlapsTest {

  static IPPool pool(String name, String cidr, String network, String created) {
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr(cidr);
    spec.setNetwork(network);
    IPPool pool = new IPPool();
    pool.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withUid("uid-" + name)
            .withCreationTimestamp(created)
            .build());
    pool.setSpec(spec);
    return pool;
  }

  /** The pool with the status the operator writes when it marks a pool Ready. */
  static IPPool ready(IPPool pool) {
    return withReady(pool, 1L, Conditions.TRUE, PoolStatusCalculator.REASON_CHECKED, "checked");
  }

  static IPPool refused(IPPool pool) {
    return withReady(pool, null, Conditions.FALSE, PoolStatusCalculator.REASON_OVERLAP, "overlaps");
  }

  /** {@code pool} with a status of one condition, Ready as given. */
  private static IPPool withReady(
      IPPool pool, Long observedGeneration, String ready, String reason, String message) {
    IPPoolStatus status = new IPPoolStatus();
    status.setObservedGeneration(observedGeneration);
    status.setConditions(
        List.of(
            Conditions.of(
                PoolStatusCalculator.READY, ready, reason, message, 1, List.of(), Instant.EPOCH)));
    pool.setStatus(status);
    return pool;
  }

  static IPPool deleting(IPPool pool) {
    pool.getMetadata().setDeletionTimestamp("2026-01-01T00:01:00Z");
    return pool;
  }

  @Test
  void theNewerOfTwoOverlappingPoolsOfOneNetworkIsRefused() {
    IPPool older = pool("b", "10.0.0.0/16", "blue", "2026-01-01T00:00:00Z");
    IPPool newer = pool("a", "10.0.5.0/24", "blue", "2026-01-01T00:00:01Z");
    List<IPPool> all = List.of(older, newer);

    assertThat(PoolOverlaps.winnerOver(newer, all)).contains(older);
    assertThat(PoolOverlaps.winnerOver(older, all)).isEmpty();
  }

  @Test
  void ofPoolsNotYetReadyCreatedInTheSameSecondTheSmallerNameWins() {
    IPPool a = pool("a", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");
    IPPool b = pool("b", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");

    assertThat(PoolOverlaps.winnerOver(b, List.of(a, b))).contains(a);
    assertThat(PoolOverlaps.winnerOver(a, List.of(a, b))).isEmpty();
  }

  @Test
  void poolsOfDifferentNetworksOrFamiliesOrDisjointCidrsDoNotConflict() {
    IPPool blue = pool("a", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z");
    assertThat(PoolOverlaps.conflict(blue, pool("b", "10.0.0.0/24", "red", "2026-01-01T00:00:00Z")))
        .isFalse();
    assertThat(
            PoolOverlaps.conflict(blue, pool("c", "10.0.1.0/24", "blue", "2026-01-01T00:00:00Z")))
        .isFalse();
    assertThat(PoolOverlaps.conflict(blue, pool("d", "fd00::/64", "blue", "2026-01-01T00:00:00Z")))
        .isFalse();
    assertThat(PoolOverlaps.conflict(blue, blue))
        .as("a pool does not conflict with itself")
        .isFalse();
  }

  @Test
  void anAbsentNetworkIsOneNetworkOfItsOwn() {
    IPPool plain = pool("a", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");
    assertThat(
            PoolOverlaps.conflict(plain, pool("b", "10.0.0.128/25", null, "2026-01-01T00:00:01Z")))
        .isTrue();
    assertThat(
            PoolOverlaps.conflict(
                plain, pool("c", "10.0.0.128/25", "blue", "2026-01-01T00:00:01Z")))
        .isFalse();
  }

  @Test
  void aPoolIsRefusedEvenWhenTheOlderPoolItOverlapsIsItselfRefused() {
    IPPool first = pool("a", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");
    IPPool second = pool("b", "10.0.0.0/16", null, "2026-01-01T00:00:01Z");
    IPPool third = pool("c", "10.0.1.0/24", null, "2026-01-01T00:00:02Z");
    List<IPPool> all = List.of(first, second, third);

    assertThat(PoolOverlaps.winnerOver(second, all)).contains(first);
    assertThat(PoolOverlaps.winnerOver(third, all)).contains(second);
  }

  @Test
  void aReadyPoolKeepsWinningOverAnOlderPoolNotYetReady() {
    IPPool winner = ready(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    IPPool olderName = pool("a", "10.0.0.0/25", "blue", "2026-01-01T00:00:00Z");
    IPPool olderTime = pool("c", "10.0.0.0/16", "blue", "2025-12-31T23:59:59Z");
    List<IPPool> all = List.of(winner, olderName, olderTime);

    assertThat(PoolOverlaps.winnerOver(winner, all)).as("the Ready pool stays Ready").isEmpty();
    assertThat(PoolOverlaps.winnerOver(olderName, all)).contains(winner);
    assertThat(PoolOverlaps.winnerOver(olderTime, all)).contains(winner);
  }

  @Test
  void aReadyPoolKeepsItsVerdictAfterItsSpecIsEdited() {
    IPPool edited = ready(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    edited.getMetadata().setGeneration(2L);
    IPPool older = pool("a", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z");

    assertThat(PoolOverlaps.winnerOver(edited, List.of(edited, older))).isEmpty();
    assertThat(PoolOverlaps.winnerOver(older, List.of(edited, older))).contains(edited);
  }

  @Test
  void aReadyPoolDoesNotStopAPoolOfAnotherNetwork() {
    IPPool blue = ready(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    IPPool red = pool("a", "10.0.0.0/24", "red", "2026-01-01T00:00:01Z");
    IPPool plain = pool("c", "10.0.0.0/24", null, "2026-01-01T00:00:01Z");
    List<IPPool> all = List.of(blue, red, plain);

    assertThat(PoolOverlaps.winnerOver(red, all)).isEmpty();
    assertThat(PoolOverlaps.winnerOver(plain, all)).isEmpty();
  }

  @Test
  void aRefusedPoolBecomesReadyWhenItsWinnerIsGoneButNotWhileItIsBeingDeleted() {
    IPPool winner = ready(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    IPPool loser = refused(pool("a", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    assertThat(PoolOverlaps.winnerOver(loser, List.of(winner, loser))).contains(winner);

    // Being deleted, the winner's Ready says Terminating; it may still hold addresses.
    IPPool terminating = deleting(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    assertThat(PoolOverlaps.winnerOver(loser, List.of(terminating, loser))).contains(terminating);

    assertThat(PoolOverlaps.winnerOver(loser, List.of(loser))).isEmpty();
  }

  @Test
  void aPoolBeingDeletedDoesNotTakeTheVerdictOfAReadyPool() {
    IPPool ready = ready(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:01Z"));
    IPPool older = deleting(pool("a", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));

    assertThat(PoolOverlaps.winnerOver(ready, List.of(ready, older))).isEmpty();
  }

  @Test
  void ofTwoPoolsBothMarkedReadyTheOlderKeepsIt() {
    IPPool older = ready(pool("a", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));
    IPPool newer = ready(pool("b", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z"));

    assertThat(PoolOverlaps.winnerOver(older, List.of(older, newer))).isEmpty();
    assertThat(PoolOverlaps.winnerOver(newer, List.of(older, newer))).contains(older);
  }

  @Test
  void onlyReadyTrueWithReasonCheckedMarksAPoolReady() {
    assertThat(PoolOverlaps.markedReady(pool("a", "10.0.0.0/24", null, null))).isFalse();
    assertThat(PoolOverlaps.markedReady(refused(pool("a", "10.0.0.0/24", null, null)))).isFalse();
    assertThat(PoolOverlaps.markedReady(ready(pool("a", "10.0.0.0/24", null, null)))).isTrue();
  }
}
