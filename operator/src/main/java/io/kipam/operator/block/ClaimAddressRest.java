package io.kipam.operator.block;

import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;

/**
 * Decides how much longer the sub-claim of a deleted IPAMClaim keeps its address (design §4.8: the
 * reuse delay holds for every change of holder). The claim was the address's holder; once it is
 * gone the address rests for its pool's {@code reuseDelaySeconds} (30 s when unset, or when the
 * pool is not known) before another holder may take it. The rest is counted from the sub-claim's
 * {@code metadata.deletionTimestamp}, which the API server keeps, so a restart of kipam-operator
 * neither loses nor restarts it. Only sub-claims of claims ({@code spec.claim}) rest here: one a
 * node gives back on DEL has rested on the node already. Pure: tested without a control plane.
 */
final class ClaimAddressRest {

  /** The pool's {@code reuseDelaySeconds} when it sets none (the CRD's default). */
  static final Duration DEFAULT_REUSE_DELAY = Duration.ofSeconds(30);

  private ClaimAddressRest() {}

  /**
   * How much longer {@code block}, being deleted, keeps its address; empty when it need not wait
   * (its rest is over, it is not a claim's sub-claim, or it is not being deleted).
   */
  static Optional<Duration> remaining(IPBlock block, Optional<IPPool> pool, Instant now) {
    String deleted = block.getMetadata().getDeletionTimestamp();
    if (block.getSpec() == null || block.getSpec().getClaim() == null || deleted == null) {
      return Optional.empty();
    }
    Instant due = OffsetDateTime.parse(deleted).toInstant().plus(reuseDelay(pool));
    return now.isBefore(due) ? Optional.of(Duration.between(now, due)) : Optional.empty();
  }

  /** The pool's reuse delay; the default when the pool or its setting is unknown. */
  static Duration reuseDelay(Optional<IPPool> pool) {
    return pool.map(IPPool::getSpec)
        .map(IPPoolSpec::getReuseDelaySeconds)
        .map(seconds -> Duration.ofSeconds(seconds))
        .orElse(DEFAULT_REUSE_DELAY);
  }
}
