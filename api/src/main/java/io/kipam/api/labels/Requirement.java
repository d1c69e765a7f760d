package io.kipam.api.labels;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One condition of a label selector: a key, an {@link Operator} and its values, checked on
 * construction exactly as Kubernetes checks a selector (apimachinery {@code
 * labels.NewRequirement}): the key and every value must be valid label syntax, {@code =} takes one
 * value, {@code In} and {@code NotIn} at least one, {@code Exists} and {@code DoesNotExist} none.
 * So a requirement that exists is one Kubernetes would accept, and {@link #matches} never meets a
 * case it cannot decide.
 *
 * @param values in the order given; duplicates are kept, as Kubernetes keeps them
 */
public record Requirement(String key, Operator operator, List<String> values) {

  /**
   * @throws IllegalArgumentException naming every problem, joined with "; "
   */
  public Requirement {
    Objects.requireNonNull(operator, "operator");
    List<String> problems = new ArrayList<>();
    LabelSyntax.keyProblem(key).ifPresent(problems::add);
    List<String> given = values == null ? List.of() : values;
    if (operator == Operator.EQUALS && given.size() != 1) {
      problems.add("= takes exactly one value, got " + given.size());
    } else if (operator.takesValues() && given.isEmpty()) {
      problems.add(operator.apiName() + " needs at least one value in values");
    } else if (!operator.takesValues() && !given.isEmpty()) {
      problems.add(operator.apiName() + " takes no values, got " + given.size());
    }
    for (String value : given) {
      LabelSyntax.valueProblem(value).ifPresent(problems::add);
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    values = List.copyOf(given);
  }

  /** The requirement of a {@code matchLabels} entry: the label {@code key} has {@code value}. */
  public static Requirement equal(String key, String value) {
    return new Requirement(key, Operator.EQUALS, Collections.singletonList(value));
  }

  /**
   * Whether the labels meet this requirement, as Kubernetes decides it: {@code NotIn} and {@code
   * DoesNotExist} hold when the key is absent; {@code =} and {@code In} need the key present with
   * one of the values; a key present with the empty value is present.
   */
  public boolean matches(Map<String, String> labels) {
    Map<String, String> present = labels == null ? Map.of() : labels;
    boolean has = present.containsKey(key);
    return switch (operator) {
      case EQUALS, IN -> has && isOneOfValues(present.get(key));
      case NOT_IN -> !has || !isOneOfValues(present.get(key));
      case EXISTS -> has;
      case DOES_NOT_EXIST -> !has;
    };
  }

  /**
   * The requirement as kubectl prints it: {@code app=web}, {@code tier in (a,b)}, {@code env notin
   * (dev)}, {@code legacy}, {@code !legacy}. Values are sorted, as kubectl sorts them.
   */
  @Override
  public String toString() {
    StringBuilder text = new StringBuilder();
    if (operator == Operator.DOES_NOT_EXIST) {
      text.append('!');
    }
    text.append(key).append(operator.infix());
    if (operator == Operator.EQUALS) {
      text.append(values.get(0));
    } else if (operator.takesValues()) {
      text.append('(').append(String.join(",", values.stream().sorted().toList())).append(')');
    }
    return text.toString();
  }

  private boolean isOneOfValues(String value) {
    return value != null && values.contains(value);
  }
}
