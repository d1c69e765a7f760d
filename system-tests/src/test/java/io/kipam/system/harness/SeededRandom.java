package io.kipam.system.harness;

import java.util.Random;

/**
 * The random choices of a test that can be replayed: seeded from {@code -Dkipam.seed=N} when it is
 * given, else from the clock. {@link #print} writes the seed with the option that replays the run,
 * so that a failure found by chance can be run again the same way.
 */
public final class SeededRandom extends Random {
  private static final long serialVersionUID = 1L;

  private final long seed;

  public SeededRandom() {
    this(Long.getLong("kipam.seed", System.nanoTime()));
  }

  private SeededRandom(long seed) {
    super(seed);
    this.seed = seed;
  }

  /** The seed this generator started from. */
  public long seed() {
    return seed;
  }

  /** Prints "{@code run} seed N (rerun with -Dkipam.seed=N)". */
  public void print(String run) {
    System.out.println(run + " seed " + seed + " (rerun with -Dkipam.seed=" + seed + ")");
  }
}
