package io.kipam.system.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The nearest-rank percentile the benchmarks report. */
final class Percentiles {

  private Percentiles() {}

  /** The {@code p}-th percentile of {@code values} (nearest rank; the lowest for p = 0). */
  static double of(List<Double> values, int p) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }
}
