package io.kipam.operator.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolStatus;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PoolStatusCalculatorTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final PoolLayout LAYOUT =
      PoolLayout.builder().cidr("10.0.0.0/24").blockSize(28).build();

  private static IPBlock block(String cidr, Long allocated) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("p." + cidr).build());
    block.setSpec(new IPBlockSpec("p", cidr, "node-a"));
    IPBlockStatus status = new IPBlockStatus();
    status.setAllocated(allocated);
    block.setStatus(status);
    return block;
  }

  /** Generation 1 of a pool none of whose blocks is claimed. */
  private static PoolFacts unclaimed(
      Optional<PoolLayout> layout,
      Optional<String> invalid,
      Optional<IPPool> overlapping,
      Optional<String> terminating) {
    return new PoolFacts(1, layout, invalid, List.of(), overlapping, terminating);
  }

  private static PoolFacts facts(List<IPBlock> blocks) {
    return new PoolFacts(
        3, Optional.of(LAYOUT), Optional.empty(), blocks, Optional.empty(), Optional.empty());
  }

  private static String condition(IPPoolStatus status, String type) {
    Condition c = Conditions.find(status.getConditions(), type).orElseThrow();
    return c.getStatus() + "/" + c.getReason();
  }

  @Test
  void countsComeFromTheLayoutAndTheBlocks() {
    IPPoolStatus status =
        PoolStatusCalculator.status(
            facts(List.of(block("10.0.0.0/28", 5L), block("10.0.0.16/28", null))), null, T0);

    assertThat(status.getCapacity()).isEqualTo("254");
    assertThat(status.getAllocated()).isEqualTo(5);
    assertThat(status.getAvailable()).isEqualTo("249");
    assertThat(status.getBlocks()).isEqualTo(2);
    assertThat(status.getObservedGeneration()).isEqualTo(3);
    assertThat(condition(status, "Ready")).isEqualTo("True/Checked");
    assertThat(condition(status, "Exhausted")).isEqualTo("False/AddressesAvailable");
    assertThat(condition(status, "Terminating")).isEqualTo("False/NotDeleted");
  }

  @Test
  void aFullPoolIsExhaustedAndAvailableNeverGoesBelowZero() {
    IPPoolStatus status =
        PoolStatusCalculator.status(facts(List.of(block("10.0.0.0/24", 300L))), null, T0);

    assertThat(status.getAvailable()).isEqualTo("0");
    assertThat(condition(status, "Exhausted")).isEqualTo("True/NoAddressLeft");
  }

  @Test
  void aHugePoolIsCountedExactly() {
    PoolLayout v6 = PoolLayout.builder().cidr("fd00::/64").blockSize(120).build();
    IPPoolStatus status =
        PoolStatusCalculator.status(
            unclaimed(Optional.of(v6), Optional.empty(), Optional.empty(), Optional.empty()),
            null,
            T0);

    assertThat(status.getCapacity()).isEqualTo("18446744073709551615");
    assertThat(status.getAvailable()).isEqualTo("18446744073709551615");
  }

  @Test
  void anOverlappingPoolIsNotReadyAndTheMessageNamesTheOlderPool() {
    var older = PoolOverlapsTest.pool("older", "10.0.0.0/16", "blue", "2026-01-01T00:00:00Z");
    IPPoolStatus status =
        PoolStatusCalculator.status(
            unclaimed(Optional.of(LAYOUT), Optional.empty(), Optional.of(older), Optional.empty()),
            null,
            T0);

    Condition ready = Conditions.find(status.getConditions(), "Ready").orElseThrow();
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getReason()).isEqualTo("Overlap");
    assertThat(ready.getMessage()).contains("older", "10.0.0.0/16", "network blue");
  }

  @Test
  void aPoolBeingDeletedIsTerminatingAndNotReady() {
    IPPoolStatus status =
        PoolStatusCalculator.status(
            unclaimed(
                Optional.of(LAYOUT),
                Optional.empty(),
                Optional.empty(),
                Optional.of("waiting for ns/a")),
            null,
            T0);

    assertThat(condition(status, "Ready")).isEqualTo("False/Terminating");
    assertThat(condition(status, "Terminating")).isEqualTo("True/Deleting");
    assertThat(Conditions.find(status.getConditions(), "Terminating").orElseThrow().getMessage())
        .isEqualTo("waiting for ns/a");
  }

  @Test
  void anInvalidSpecIsNotReadyAndHasNoCounts() {
    IPPoolStatus status =
        PoolStatusCalculator.status(
            unclaimed(
                Optional.empty(), Optional.of("bad cidr"), Optional.empty(), Optional.empty()),
            null,
            T0);

    assertThat(condition(status, "Ready")).isEqualTo("False/Invalid");
    assertThat(condition(status, "Exhausted")).isEqualTo("Unknown/Invalid");
    assertThat(status.getCapacity()).isNull();
  }

  @Test
  void aConditionKeepsItsTransitionTimeWhileItsStatusHolds() {
    IPPoolStatus first = PoolStatusCalculator.status(facts(List.of()), null, T0);
    IPPoolStatus second =
        PoolStatusCalculator.status(
            facts(List.of(block("10.0.0.0/24", 254L))), first, T0.plusSeconds(60));

    assertThat(
            Conditions.find(second.getConditions(), "Ready").orElseThrow().getLastTransitionTime())
        .isEqualTo(T0.toString());
    assertThat(
            Conditions.find(second.getConditions(), "Exhausted")
                .orElseThrow()
                .getLastTransitionTime())
        .isEqualTo(T0.plusSeconds(60).toString());
  }

  @Test
  void theCountsCarryWhenTheyWereTakenAndAnExhaustedCountIsRenewed() {
    IPPoolStatus first =
        PoolStatusCalculator.status(facts(List.of(block("10.0.0.0/28", 5L))), null, T0);
    assertThat(first.getCountedAt()).as("a first count").isEqualTo(T0.toString());

    IPPoolStatus same =
        PoolStatusCalculator.status(
            facts(List.of(block("10.0.0.0/28", 5L))), first, T0.plusSeconds(60));
    assertThat(same.getCountedAt()).as("the same counts keep their time").isEqualTo(T0.toString());

    Instant t1 = T0.plusSeconds(61);
    IPPoolStatus full =
        PoolStatusCalculator.status(facts(List.of(block("10.0.0.0/24", 254L))), same, t1);
    assertThat(full.getCountedAt()).as("new counts").isEqualTo(t1.toString());

    IPPoolStatus soon =
        PoolStatusCalculator.status(
            facts(List.of(block("10.0.0.0/24", 254L))),
            full,
            t1.plus(PoolStatusCalculator.RECOUNT).minusMillis(1));
    assertThat(soon.getCountedAt()).isEqualTo(t1.toString());
    Instant t2 = t1.plus(PoolStatusCalculator.RECOUNT);
    IPPoolStatus renewed =
        PoolStatusCalculator.status(facts(List.of(block("10.0.0.0/24", 254L))), soon, t2);
    assertThat(renewed.getCountedAt())
        .as("none available: counted again, so nodes may trust it after their last ADD")
        .isEqualTo(t2.toString());
  }
}
