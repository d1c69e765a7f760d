package io.kipam.operator.pool;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/** Building status conditions that keep their transition time while their status holds. */
public final class Conditions {

  public static final String TRUE = "True";
  public static final String FALSE = "False";
  public static final String UNKNOWN = "Unknown";

  private Conditions() {}

  public static Optional<Condition> find(List<Condition> conditions, String type) {
    return conditions == null
        ? Optional.empty()
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /**
   * A condition of {@code type}; its {@code lastTransitionTime} is the previous one's when the
   * status did not change, else {@code now}.
   */
  public static Condition of(
      String type,
      String status,
      String reason,
      String message,
      long generation,
      List<Condition> previous,
      Instant now) {
    String since =
        find(previous, type)
            .filter(c -> status.equals(c.getStatus()) && c.getLastTransitionTime() != null)
            .map(Condition::getLastTransitionTime)
            .orElse(now.truncatedTo(ChronoUnit.SECONDS).toString());
    return new ConditionBuilder()
        .withType(type)
        .withStatus(status)
        .withReason(reason)
        .withMessage(message)
        .withObservedGeneration(generation)
        .withLastTransitionTime(since)
        .build();
  }
}
