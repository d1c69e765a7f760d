package io.kipam.operator.pool;

import static io.kipam.operator.pool.Conditions.FALSE;
import static io.kipam.operator.pool.Conditions.TRUE;
import static io.kipam.operator.pool.Conditions.UNKNOWN;

import io.fabric8.kubernetes.api.model.Condition;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolStatus;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Computes a pool's status from {@link PoolFacts}: a fresh object holding only what kipam-operator
 * owns. Counts: {@code capacity} is the pool's assignable addresses; {@code allocated} is counted
 * from its blocks' {@code status.allocated} (kept by the node daemons; absent counts as 0), each
 * slot's addresses once ({@link PoolCount}); {@code available} is capacity minus allocated, never
 * below 0. Conditions:
 *
 * <ul>
 *   <li>{@code Ready}: True (reason {@code Checked}) once the spec builds a layout and no pool that
 *       overlaps it wins over it ({@link PoolOverlaps}); False with reason {@code Overlap}, {@code
 *       Invalid} or {@code Terminating} otherwise. Node daemons allocate only from a pool Ready for
 *       its current generation.
 *   <li>{@code Exhausted}: True when no address is available, False otherwise.
 *   <li>{@code Terminating}: True while the pool is being deleted, saying what it waits for.
 * </ul>
 */
public final class PoolStatusCalculator {

  public static final String READY = "Ready";
  public static final String EXHAUSTED = "Exhausted";
  public static final String TERMINATING = "Terminating";

  /** Written by the pool reconciler from the audit's findings, only while it is True. */
  public static final String DUPLICATE_ADDRESSES = "DuplicateAddresses";

  public static final String REASON_CHECKED = "Checked";
  public static final String REASON_OVERLAP = "Overlap";
  public static final String REASON_INVALID = "Invalid";
  public static final String REASON_TERMINATING = "Terminating";

  /** How long a count of none available stands before it is taken again. */
  public static final Duration RECOUNT = Duration.ofSeconds(10);

  private PoolStatusCalculator() {}

  public static IPPoolStatus status(PoolFacts facts, IPPoolStatus previous, Instant now) {
    List<Condition> before = previous == null ? List.of() : previous.getConditions();
    long generation = facts.generation();
    long allocated = PoolCount.allocated(facts.blocks(), facts.layout());

    IPPoolStatus status = new IPPoolStatus();
    status.setObservedGeneration(generation);
    status.setBlocks(facts.blocks().size());
    status.setAllocated(allocated);
    List<Condition> conditions = new ArrayList<>();
    conditions.add(ready(facts, before, now));
    if (facts.layout().isPresent()) {
      BigInteger capacity = facts.layout().get().assignableCount();
      BigInteger available = capacity.subtract(BigInteger.valueOf(allocated)).max(BigInteger.ZERO);
      status.setCapacity(capacity.toString());
      status.setAvailable(available.toString());
      status.setCountedAt(countedAt(previous, status, now));
      conditions.add(
          available.signum() == 0
              ? Conditions.of(
                  EXHAUSTED,
                  TRUE,
                  "NoAddressLeft",
                  "all " + capacity + " assignable addresses are allocated",
                  generation,
                  before,
                  now)
              : Conditions.of(
                  EXHAUSTED,
                  FALSE,
                  "AddressesAvailable",
                  available + " of " + capacity + " assignable addresses are available",
                  generation,
                  before,
                  now));
    } else {
      conditions.add(
          Conditions.of(
              EXHAUSTED,
              UNKNOWN,
              REASON_INVALID,
              "the pool's spec describes no addresses",
              generation,
              before,
              now));
    }
    conditions.add(
        facts
            .terminating()
            .map(
                waitingFor ->
                    Conditions.of(
                        TERMINATING, TRUE, "Deleting", waitingFor, generation, before, now))
            .orElseGet(
                () ->
                    Conditions.of(
                        TERMINATING,
                        FALSE,
                        "NotDeleted",
                        "the pool is not being deleted",
                        generation,
                        before,
                        now)));
    status.setConditions(conditions);
    return status;
  }

  /**
   * When {@code status}'s counts were taken: {@code previous}'s time while the counts are the same,
   * else now; a count of none available is renewed once it is {@link #RECOUNT} old.
   */
  static String countedAt(IPPoolStatus previous, IPPoolStatus status, Instant now) {
    String stamp = now.truncatedTo(ChronoUnit.MILLIS).toString();
    if (previous == null
        || previous.getCountedAt() == null
        || !Objects.equals(previous.getAllocated(), status.getAllocated())
        || !Objects.equals(previous.getAvailable(), status.getAvailable())
        || !Objects.equals(previous.getCapacity(), status.getCapacity())) {
      return stamp;
    }
    if ("0".equals(status.getAvailable())) {
      try {
        if (!now.isBefore(Instant.parse(previous.getCountedAt()).plus(RECOUNT))) {
          return stamp;
        }
      } catch (DateTimeParseException e) {
        return stamp;
      }
    }
    return previous.getCountedAt();
  }

  private static Condition ready(PoolFacts facts, List<Condition> before, Instant now) {
    long generation = facts.generation();
    if (facts.terminating().isPresent()) {
      return Conditions.of(
          READY,
          FALSE,
          REASON_TERMINATING,
          "the pool is being deleted: no new allocations",
          generation,
          before,
          now);
    }
    if (facts.invalid().isPresent()) {
      return Conditions.of(
          READY, FALSE, REASON_INVALID, facts.invalid().get(), generation, before, now);
    }
    if (facts.overlapping().isPresent()) {
      return Conditions.of(
          READY, FALSE, REASON_OVERLAP, overlapMessage(facts), generation, before, now);
    }
    return Conditions.of(
        READY,
        TRUE,
        REASON_CHECKED,
        "checked for generation "
            + generation
            + ": no pool of its network that overlaps it was Ready or came before it",
        generation,
        before,
        now);
  }

  private static String overlapMessage(PoolFacts facts) {
    IPPool other = facts.overlapping().orElseThrow();
    String network = PoolOverlaps.network(other);
    return "spec.cidr overlaps "
        + other.getSpec().getCidr()
        + " of IPPool "
        + other.getMetadata().getName()
        + why(other)
        + (network.isEmpty() ? "the default network (no spec.network)" : "network " + network)
        + "; no address is handed out from this pool while both exist";
  }

  private static String why(IPPool other) {
    return switch (PoolOverlaps.standing(other)) {
      case READY -> ", a Ready pool of ";
      case DELETING -> ", a pool being deleted of ";
      case UNDECIDED -> ", an older pool of ";
    };
  }
}
