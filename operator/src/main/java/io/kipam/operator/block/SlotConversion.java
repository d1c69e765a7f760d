package io.kipam.operator.block;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.kube.Blocks;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The last resort of {@link PoolPressure}: which Exclusive slot to ask to become Shared (through
 * {@code status.share}) so that a node that is short can sub-claim its free addresses. Pure:
 * decides from cached blocks and the pool's layout.
 *
 * <p>A conversion is asked for only when every other way is closed: the node is short (every
 * Exclusive slot it holds is full; a node that holds none but sub-claims addresses counts as short
 * too), no slot of the pool is unclaimed, no Exclusive slot reports 0 allocated (an empty slot
 * moves by the release handshake instead, as a donor or once idle), no Shared slot has an address
 * left without a sub-claim, and no conversion is under way in the pool (asked less than {@link
 * #ANSWER_WAIT} ago, not yet answered), so slots turn Shared one at a time, as they are needed. A
 * request its holder has not answered within {@link #ANSWER_WAIT} (its daemon stopped, say) no
 * longer holds the pool up: the next slot may be asked. The slot asked is the Exclusive slot with
 * the most free addresses (its assignable addresses minus its {@code status.allocated}), without a
 * release round (or with one its holder refused) and never asked before; ties go to the first name.
 */
final class SlotConversion {

  /** How long an unanswered request to become Shared keeps the pool's next request waiting. */
  static final Duration ANSWER_WAIT = Duration.ofSeconds(30);

  private SlotConversion() {}

  /** As {@link #candidateFor(String, PoolLayout, Collection, Instant)}, no request stale yet. */
  static Optional<IPBlock> candidateFor(
      String node, PoolLayout layout, Collection<IPBlock> blocks) {
    return candidateFor(node, layout, blocks, Instant.MIN);
  }

  /** The Exclusive slot to ask to become Shared because {@code node} is short, if any. */
  static Optional<IPBlock> candidateFor(
      String node, PoolLayout layout, Collection<IPBlock> blocks, Instant now) {
    Collection<IPBlock> live = live(blocks);
    Collection<IPBlock> slots = live.stream().filter(b -> !Blocks.subClaim(b)).toList();
    Collection<IPBlock> exclusive = slots.stream().filter(b -> !Blocks.shared(b)).toList();
    if (!shortOfSlots(node, layout, slots, exclusive)
        || exclusive.stream().anyMatch(b -> Blocks.reportedAllocated(b).orElse(-1L) == 0)
        || exclusive.stream().anyMatch(b -> waitedFor(b, now))
        || sharedAddressLeft(layout, slots, live)) {
      return Optional.empty();
    }
    Function<IPBlock, BigInteger> free = b -> free(b, layout);
    return exclusive.stream()
        .filter(b -> b.getStatus() != null && notInRound(b) && !asked(b))
        .filter(b -> Blocks.reportedAllocated(b).isPresent())
        .filter(b -> free.apply(b).signum() > 0)
        .min(Comparator.comparing(free).reversed().thenComparing(b -> b.getMetadata().getName()));
  }

  /**
   * {@code node} is short, no slot is unclaimed, and an Exclusive slot of another node was claimed
   * less than {@link #ANSWER_WAIT} ago and carries no count yet: until its holder reports one, no
   * slot can be chosen ({@link #candidateFor} asks only slots with a count), and nothing else may
   * come to look at the short node again — the new count of a slot that is not full starts no look.
   * So the caller looks again soon. A slot without a creation time counts as just claimed.
   */
  static boolean awaitingCount(
      String node, PoolLayout layout, Collection<IPBlock> blocks, Instant now) {
    Collection<IPBlock> slots = live(blocks).stream().filter(b -> !Blocks.subClaim(b)).toList();
    Collection<IPBlock> exclusive = slots.stream().filter(b -> !Blocks.shared(b)).toList();
    return shortOfSlots(node, layout, slots, exclusive)
        && exclusive.stream()
            .filter(b -> Blocks.reportedAllocated(b).isEmpty())
            .anyMatch(b -> claimedWithin(b, ANSWER_WAIT, now));
  }

  private static Collection<IPBlock> live(Collection<IPBlock> blocks) {
    return blocks.stream().filter(b -> b.getMetadata().getDeletionTimestamp() == null).toList();
  }

  /** Every Exclusive slot {@code node} holds is full, and no slot of the pool is unclaimed. */
  private static boolean shortOfSlots(
      String node, PoolLayout layout, Collection<IPBlock> slots, Collection<IPBlock> exclusive) {
    return exclusive.stream()
            .filter(b -> node.equals(b.getSpec().getNode()))
            .allMatch(b -> PoolPressure.full(b, layout))
        && !PoolPressure.unclaimedBlockLeft(layout, slots);
  }

  private static boolean claimedWithin(IPBlock block, Duration within, Instant now) {
    String created = block.getMetadata().getCreationTimestamp();
    try {
      return created == null || !now.isAfter(Instant.parse(created).plus(within));
    } catch (RuntimeException unreadable) {
      return true;
    }
  }

  /**
   * No release round is open on the slot: none asked, or one its holder refused (it stays on the
   * slot until the operator clears it, and the slot is in use meanwhile).
   */
  private static boolean notInRound(IPBlock slot) {
    return slot.getStatus().getRelease() == null
        || slot.getStatus().getRelease().getState() == ReleaseState.Refused;
  }

  /** The slot carries the operator's request to become Shared. */
  static boolean asked(IPBlock block) {
    return block.getStatus() != null && block.getStatus().getShare() != null;
  }

  /**
   * The slot is asked to become Shared, its holder has not answered, and the request is younger
   * than {@link #ANSWER_WAIT} (a request without a readable time counts as young).
   */
  private static boolean waitedFor(IPBlock block, Instant now) {
    if (!asked(block)) {
      return false;
    }
    try {
      Instant at = Instant.parse(block.getStatus().getShare().getRequestedAt());
      return !now.isAfter(at.plus(ANSWER_WAIT));
    } catch (RuntimeException unreadable) {
      return true;
    }
  }

  /** The slot is asked to become Shared and its holder has not answered yet. */
  static boolean underWay(IPBlock block) {
    return asked(block) && !Blocks.shared(block);
  }

  private static BigInteger free(IPBlock slot, PoolLayout layout) {
    return assignable(slot, layout).subtract(BigInteger.valueOf(Blocks.allocated(slot)));
  }

  private static BigInteger assignable(IPBlock slot, PoolLayout layout) {
    try {
      return layout.assignableCount(Cidr.parse(slot.getSpec().getCidr()));
    } catch (IllegalArgumentException e) {
      return BigInteger.ZERO; // not a slot of this layout: nothing to gain from it
    }
  }

  /** Some Shared slot has an assignable address no sub-claim holds: the short node can use it. */
  private static boolean sharedAddressLeft(
      PoolLayout layout, Collection<IPBlock> slots, Collection<IPBlock> live) {
    Map<String, Long> subClaims =
        live.stream()
            .filter(Blocks::subClaim)
            .collect(Collectors.groupingBy(b -> b.getSpec().getParent(), Collectors.counting()));
    return slots.stream()
        .filter(Blocks::shared)
        .anyMatch(
            s ->
                assignable(s, layout)
                        .compareTo(
                            BigInteger.valueOf(
                                subClaims.getOrDefault(s.getMetadata().getName(), 0L)))
                    > 0);
  }
}
