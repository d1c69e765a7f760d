package io.kipam.operator.pool;

import io.fabric8.kubernetes.api.model.Condition;
import io.kipam.api.net.Cidr;
import io.kipam.api.v1alpha1.IPPool;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;

/**
 * Which pools conflict, and which of two conflicting pools may be Ready. Two pools conflict when
 * they are of the same {@code spec.network} (an absent network is one network of its own) and their
 * CIDRs overlap. Of two conflicting pools the one first in {@link #PRECEDENCE} wins:
 *
 * <ol>
 *   <li>a pool marked Ready ({@code Ready=True}, reason {@code Checked}) keeps its verdict: node
 *       daemons may have allocated from it, and geometry is immutable, so the verdict cannot go
 *       stale;
 *   <li>then a pool being deleted: it may still hold allocations, so nothing overlapping it becomes
 *       Ready before it is gone;
 *   <li>then the rest, oldest first by {@code creationTimestamp} and then by name (the timestamp
 *       has whole seconds). This order only breaks ties between pools neither of which is Ready.
 * </ol>
 *
 * A pool is refused when any pool before it conflicts with it, even one that is itself refused. Two
 * conflicting pools both marked Ready (left by an operator without this rule) are ordered by age:
 * the newer one is refused. The order is only as good as the pools it is given: the Ready decision
 * is taken on a fresh read of every pool, under {@link NetworkLocks}.
 */
public final class PoolOverlaps {

  /** Why a pool stands where it does in {@link #PRECEDENCE}, strongest first. */
  public enum Standing {
    READY,
    DELETING,
    UNDECIDED
  }

  /** Oldest first. */
  public static final Comparator<IPPool> AGE =
      Comparator.comparing((IPPool p) -> created(p)).thenComparing(p -> p.getMetadata().getName());

  /** Winner first: by {@link Standing}, then by {@link #AGE}. */
  public static final Comparator<IPPool> PRECEDENCE =
      Comparator.comparing(PoolOverlaps::standing).thenComparing(AGE);

  private PoolOverlaps() {}

  /**
   * The pool that keeps {@code pool} from being Ready, if any: of the pools in {@code pools} that
   * conflict with it and come before it in {@link #PRECEDENCE}, the first.
   */
  public static Optional<IPPool> winnerOver(IPPool pool, Collection<IPPool> pools) {
    return pools.stream()
        .filter(other -> conflict(pool, other))
        .filter(other -> PRECEDENCE.compare(other, pool) < 0)
        .min(PRECEDENCE);
  }

  /**
   * {@code DELETING} when the pool has a {@code deletionTimestamp} (its Ready condition then says
   * {@code Terminating} and no longer tells whether it was Ready), else {@code READY} when it is
   * {@link #markedReady}, else {@code UNDECIDED}.
   */
  public static Standing standing(IPPool pool) {
    if (pool.getMetadata().getDeletionTimestamp() != null) {
      return Standing.DELETING;
    }
    return markedReady(pool) ? Standing.READY : Standing.UNDECIDED;
  }

  /**
   * Whether the pool's status says {@code Ready=True} with reason {@code Checked}, for whatever
   * generation: editing a Ready pool's ranges or routes must not reopen its overlap verdict.
   */
  public static boolean markedReady(IPPool pool) {
    if (pool.getStatus() == null) {
      return false;
    }
    Optional<Condition> ready =
        Conditions.find(pool.getStatus().getConditions(), PoolStatusCalculator.READY);
    return ready.isPresent()
        && Conditions.TRUE.equals(ready.get().getStatus())
        && PoolStatusCalculator.REASON_CHECKED.equals(ready.get().getReason());
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
