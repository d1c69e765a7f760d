package io.kipam.api.labels;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Label selector matching with Kubernetes' semantics ({@code metav1.LabelSelectorAsSelector}), for
 * the {@code nodeSelector} and {@code namespaceSelector} of an IPPool. Every {@code matchLabels}
 * entry and {@code matchExpressions} entry is a requirement and all must hold.
 *
 * <p>An absent ({@code null}) selector and an empty one (no {@code matchLabels}, no {@code
 * matchExpressions}) match everything: on a pool, leaving a selector out means "all nodes" or "all
 * namespaces". (Kubernetes' own helper maps a nil selector to "nothing"; kipam's fields say
 * otherwise, as a Pod's {@code nodeSelector} does.)
 *
 * <p>An invalid selector is an {@link IllegalArgumentException}, never a match or a mismatch: an
 * unknown operator, {@code In}/{@code NotIn} without values, {@code Exists}/{@code DoesNotExist}
 * with values, a key or value that is not label syntax, or a field the API does not have. The
 * message names each offending entry by its path ({@code spec.nodeSelector.matchExpressions[1]}).
 */
public final class Selectors {

  private Selectors() {}

  /** {@link #parse(LabelSelector, String)} with {@code "selector"} as the field's name. */
  public static Selector parse(LabelSelector selector) {
    return parse(selector, "selector");
  }

  /**
   * The validated selector.
   *
   * @param field the selector's path in its object, e.g. {@code spec.nodeSelector}, which every
   *     problem in the message starts with
   * @throws IllegalArgumentException listing every problem found
   */
  public static Selector parse(LabelSelector selector, String field) {
    if (selector == null) {
      return Selector.EVERYTHING;
    }
    List<String> problems = new ArrayList<>();
    List<Requirement> requirements = new ArrayList<>();
    unknownFields(selector.getAdditionalProperties(), field, problems);
    Map<String, String> matchLabels = selector.getMatchLabels();
    if (matchLabels != null) {
      matchLabels.forEach(
          (key, value) -> {
            String path = field + ".matchLabels[" + LabelSyntax.quote(String.valueOf(key)) + "]";
            add(() -> Requirement.equal(key, value), path, requirements, problems);
          });
    }
    List<LabelSelectorRequirement> expressions = selector.getMatchExpressions();
    if (expressions != null) {
      for (int i = 0; i < expressions.size(); i++) {
        LabelSelectorRequirement expression = expressions.get(i);
        String path = field + ".matchExpressions[" + i + "]";
        if (expression == null) {
          problems.add(path + ": is null");
          continue;
        }
        unknownFields(expression.getAdditionalProperties(), path, problems);
        String described = path + " " + asWritten(expression);
        Optional<Operator> operator = Operator.fromApiName(expression.getOperator());
        if (operator.isEmpty()) {
          problems.add(described + ": operator must be one of " + Operator.EXPRESSION_OPERATORS);
          continue;
        }
        add(
            () -> new Requirement(expression.getKey(), operator.get(), expression.getValues()),
            described,
            requirements,
            problems);
      }
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          field + " is not a valid label selector: " + String.join("; ", problems));
    }
    return new Selector(requirements);
  }

  /**
   * Whether the labels match the selector.
   *
   * @throws IllegalArgumentException if the selector is invalid
   */
  public static boolean matches(LabelSelector selector, Map<String, String> labels) {
    return parse(selector).matches(labels);
  }

  /**
   * The selector as kubectl prints it, requirements sorted by key, e.g. {@code app=web,!legacy,tier
   * in (a,b)}, or {@code <none>}, for messages such as "namespace q0 does not match
   * spec.namespaceSelector (team=blue) of IPPool p".
   *
   * @throws IllegalArgumentException if the selector is invalid
   */
  public static String describe(LabelSelector selector) {
    return parse(selector).toString();
  }

  private static void add(
      Supplier<Requirement> factory, String path, List<Requirement> into, List<String> problems) {
    try {
      into.add(factory.get());
    } catch (IllegalArgumentException e) {
      problems.add(path + ": " + e.getMessage());
    }
  }

  private static void unknownFields(Map<String, Object> fields, String path, List<String> into) {
    if (fields != null && !fields.isEmpty()) {
      into.add(path + ": unknown field(s) " + String.join(", ", fields.keySet()));
    }
  }

  private static String asWritten(LabelSelectorRequirement expression) {
    return "{key: "
        + expression.getKey()
        + ", operator: "
        + expression.getOperator()
        + ", values: "
        + expression.getValues()
        + "}";
  }
}
