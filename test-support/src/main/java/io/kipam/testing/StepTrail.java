package io.kipam.testing;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a model-based test did last and how often each outcome came: the last 30 steps, for the
 * message of the check that fails, and the outcome counts, sorted by name, for its summary.
 */
public final class StepTrail {

  private static final int KEPT = 30;

  private final Deque<String> recent = new ArrayDeque<>();
  private final SortedMap<String, Integer> outcomes = new TreeMap<>();

  /** Notes what step {@code step} did; the oldest note goes once 30 are kept. */
  public void note(int step, String what) {
    recent.addLast("step " + step + ": " + what);
    if (recent.size() > KEPT) {
      recent.removeFirst();
    }
  }

  /** Counts one more {@code outcome}. */
  public void count(String outcome) {
    outcomes.merge(outcome, 1, Integer::sum);
  }

  /** The kept notes, oldest first, one a line. */
  public String recent() {
    return String.join("\n", recent);
  }

  /** Each outcome counted so far and how often, sorted by outcome. */
  public Map<String, Integer> outcomes() {
    return Collections.unmodifiableSortedMap(outcomes);
  }
}
