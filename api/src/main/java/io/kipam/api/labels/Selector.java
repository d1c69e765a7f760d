package io.kipam.api.labels;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A validated label selector: labels match when they meet every {@link Requirement}; no
 * requirements match every set of labels. Made from the API's {@code LabelSelector} by {@link
 * Selectors#parse}, once per object generation, then asked {@link #matches} per decision.
 *
 * @param requirements sorted by key (stably: for one key, in the order given), as Kubernetes sorts
 *     them, so {@link #toString} prints what kubectl prints
 */
public record Selector(List<Requirement> requirements) {

  /** The selector that matches everything: what an absent or empty {@code LabelSelector} means. */
  public static final Selector EVERYTHING = new Selector(List.of());

  public Selector {
    requirements = requirements.stream().sorted(Comparator.comparing(Requirement::key)).toList();
  }

  /** Whether the labels meet every requirement; {@code null} labels are no labels. */
  public boolean matches(Map<String, String> labels) {
    for (Requirement requirement : requirements) {
      if (!requirement.matches(labels)) {
        return false;
      }
    }
    return true;
  }

  /** True when there is nothing to meet, so every set of labels matches. */
  public boolean matchesEverything() {
    return requirements.isEmpty();
  }

  /**
   * The selector as kubectl prints it ({@code kubectl describe}, {@code
   * metav1.FormatLabelSelector}): the requirements joined with ',', e.g. {@code
   * app=web,!legacy,tier in (a,b)}; {@code <none>} when there are none.
   */
  @Override
  public String toString() {
    if (requirements.isEmpty()) {
      return "<none>";
    }
    return requirements.stream().map(Requirement::toString).collect(Collectors.joining(","));
  }
}
