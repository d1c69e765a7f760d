package io.kipam.operator.audit;

import java.util.Map;
import java.util.Optional;

/**
 * The latest audit's duplicate addresses per pool, as a sentence naming them, for the pool
 * reconciler to publish as the condition {@code DuplicateAddresses}. The audit only writes this
 * summary and the reconciler only reads it, so the pool's status keeps one writer (its server-side
 * apply) and the two never fight over the conditions. Thread-safe.
 */
public final class DuplicateSummary {

  private volatile Map<String, String> byPool = Map.of();

  /** Replaces the summary with one audit's: pool name to a sentence naming its duplicates. */
  public void replace(Map<String, String> byPool) {
    this.byPool = Map.copyOf(byPool);
  }

  /** The duplicates of {@code pool} the latest audit found, if any. */
  public Optional<String> of(String pool) {
    return Optional.ofNullable(byPool.get(pool));
  }
}
