package io.kipam.operator.pool;

import io.kipam.api.net.Cidr;
import io.kipam.api.v1alpha1.IPPool;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;

/**
 * Which pools conflict: two pools of the same {@code spec.network} (an absent network is one
 * network of its own) whose CIDRs overlap. Of two conflicting pools the older one wins, by {@code
 * creationTimestamp} and then by name (the timestamp has whole seconds, so pools created in the
 * same second are ordered by name). A pool is refused when any older pool conflicts with it, even
 * one that is itself refused: a pool's verdict then never depends on another pool's verdict, only
 * on which pools exist.
 */
public final class PoolOverlaps {

  /** Oldest first. */
  public static final Comparator<IPPool> AGE =
      Comparator.comparing((IPPool p) -> created(p)).thenComparing(p -> p.getMetadata().getName());

  private PoolOverlaps() {}

  /** The oldest pool older than {@code pool} that conflicts with it, if any. */
  public static Optional<IPPool> olderOverlapping(IPPool pool, Collection<IPPool> pools) {
    return pools.stream()
        .filter(other -> conflict(pool, other))
        .filter(other -> AGE.compare(other, pool) < 0)
        .min(AGE);
  }

  /** Whether two distinct pools are of the same network and their CIDRs overlap. */
  public static boolean conflict(IPPool a, IPPool b) {
    if (Objects.equals(a.getMetadata().getUid(), b.getMetadata().getUid())
        || !network(a).equals(network(b))) {
      return false;
    }
    Optional<Cidr> ca = cidr(a);
    Optional<Cidr> cb = cidr(b);
    return ca.isPresent()
        && cb.isPresent()
        && ca.get().family() == cb.get().family()
        && ca.get().overlaps(cb.get());
  }

  /** The pool's network; the empty string when it has none. */
  public static String network(IPPool pool) {
    return pool.getSpec() == null || pool.getSpec().getNetwork() == null
        ? ""
        : pool.getSpec().getNetwork();
  }

  private static Optional<Cidr> cidr(IPPool pool) {
    try {
      return Optional.of(Cidr.parse(pool.getSpec().getCidr()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  private static OffsetDateTime created(IPPool pool) {
    String text = pool.getMetadata().getCreationTimestamp();
    // Not yet stored (never the case for objects from the API): newest of all.
    return text == null ? OffsetDateTime.MAX : OffsetDateTime.parse(text);
  }
}
