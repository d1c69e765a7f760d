package io.kipam.api.net;

import java.util.Random;

/**
 * Runs generated test cases from a seeded {@link Random}, one seed per case, and names the seed in
 * any failure so the case can be replayed. The base seed is fixed so builds are repeatable; pass
 * {@code -Dkipam.seed=N} to explore other cases, or to start at a failed case's seed.
 */
final class Cases {

  static final long BASE_SEED = Long.getLong("kipam.seed", 20_261_122L);

  interface Case {
    void run(Random random) throws Exception;
  }

  private Cases() {}

  /** Runs {@code count} cases; case i uses seed BASE_SEED + i. */
  static void run(int count, Case body) {
    for (int i = 0; i < count; i++) {
      long seed = BASE_SEED + i;
      try {
        body.run(new Random(seed));
      } catch (Throwable failure) {
        throw new AssertionError(
            "case "
                + i
                + " failed with seed "
                + seed
                + " (-Dkipam.seed="
                + seed
                + " replays it as case 0): "
                + failure.getMessage(),
            failure);
      }
    }
  }
}
