package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which unclaimed slots {@link SlotCandidates} offers to a claim, and how many it counts. */
class SlotCandidatesTest {

  private static final PoolLayout EIGHT =
      PoolLayout.builder().cidr("10.0.0.0/27").blockSize(30).build();

  private static Set<Cidr> all(PoolLayout layout) {
    Set<Cidr> all = new HashSet<>();
    layout.usableBlocks().forEach(all::add);
    return all;
  }

  @Test
  void everyUntakenSlotIsACandidateInRandomOrderUpToTheLimit() {
    Set<Cidr> taken = Set.of(Cidr.parse("10.0.0.0/30"), Cidr.parse("10.0.0.4/30"));
    Set<Cidr> free = all(EIGHT);
    free.removeAll(taken);

    List<Cidr> candidates = SlotCandidates.unclaimed(EIGHT, taken::contains, new Random(1), 16);
    assertThat(candidates).containsExactlyInAnyOrderElementsOf(free);

    List<Cidr> three = SlotCandidates.unclaimed(EIGHT, taken::contains, new Random(1), 3);
    assertThat(three).hasSize(3).doesNotHaveDuplicates().allMatch(free::contains);

    Set<Cidr> firsts = new HashSet<>();
    for (int seed = 0; seed < 30; seed++) {
      firsts.add(SlotCandidates.unclaimed(EIGHT, taken::contains, new Random(seed), 1).get(0));
    }
    assertThat(firsts).hasSizeGreaterThan(1);
  }

  @Test
  void aFullPoolHasNoCandidates() {
    assertThat(SlotCandidates.unclaimed(EIGHT, block -> true, new Random(1), 16)).isEmpty();
    assertThat(SlotCandidates.unclaimedCount(EIGHT, block -> true, 5)).isZero();
  }

  @Test
  void theCountStopsAtTheCap() {
    Set<Cidr> taken = Set.of(Cidr.parse("10.0.0.0/30"));
    assertThat(SlotCandidates.unclaimedCount(EIGHT, taken::contains, 100))
        .isEqualTo(all(EIGHT).size() - 1);
    assertThat(SlotCandidates.unclaimedCount(EIGHT, taken::contains, 3)).isEqualTo(3);
  }

  @Test
  void aPoolTooLargeToEnumerateIsSampledAndNeverShort() {
    PoolLayout huge = PoolLayout.builder().cidr("fd00::/48").blockSize(112).build();
    assertThat(huge.blockCount()).isGreaterThan(SlotCandidates.ENUMERABLE);

    assertThat(SlotCandidates.unclaimedCount(huge, block -> true, 7)).isEqualTo(7);
    List<Cidr> sampled = SlotCandidates.unclaimed(huge, block -> false, new Random(5), 4);
    assertThat(sampled)
        .hasSize(4)
        .doesNotHaveDuplicates()
        .allMatch(block -> huge.cidr().contains(block) && block.prefixLength() == 112);
    assertThat(SlotCandidates.unclaimed(huge, block -> true, new Random(5), 4)).isEmpty();
  }

  /**
   * An IPv6 /64 whose range holds 48 addresses in 3 slots: 2^48 slots in the CIDR, 3 in the range.
   * The candidates are the range's slots, never samples of the whole CIDR (which all miss it), and
   * the count is exact, so the pool is known short when its 3 slots are taken.
   */
  @Test
  void aSmallRangeOfAHugeCidrOffersTheSlotsItTouches() {
    PoolLayout ranged =
        PoolLayout.builder()
            .cidr("fd00:0:0:7::/64")
            .blockSize(124)
            .rangeStart("fd00:0:0:7::a000")
            .rangeEnd("fd00:0:0:7::a02f")
            .build();
    assertThat(ranged.blockCount()).isGreaterThan(SlotCandidates.ENUMERABLE);
    Set<Cidr> slots = all(ranged);
    assertThat(slots).hasSize(3);

    for (int seed = 0; seed < 20; seed++) {
      assertThat(SlotCandidates.unclaimed(ranged, block -> false, new Random(seed), 16))
          .containsExactlyInAnyOrderElementsOf(slots);
    }
    assertThat(SlotCandidates.unclaimedCount(ranged, block -> false, 100)).isEqualTo(3);
    Cidr first = slots.iterator().next();
    assertThat(SlotCandidates.unclaimedCount(ranged, block -> !block.equals(first), 100))
        .isEqualTo(1);
    assertThat(SlotCandidates.unclaimed(ranged, block -> true, new Random(1), 16)).isEmpty();
    assertThat(SlotCandidates.unclaimedCount(ranged, block -> true, 100)).isZero();
  }

  /** A huge range is sampled within the range only: every sample holds an assignable address. */
  @Test
  void aHugeRangeIsSampledInsideTheRange() {
    PoolLayout ranged =
        PoolLayout.builder()
            .cidr("fd00::/48")
            .blockSize(120)
            .rangeStart("fd00:0:0:1::")
            .rangeEnd("fd00::1:ffff:ffff:ffff:ffff")
            .build();
    List<Cidr> sampled = SlotCandidates.unclaimed(ranged, block -> false, new Random(3), 8);
    assertThat(sampled)
        .hasSize(8)
        .doesNotHaveDuplicates()
        .allMatch(block -> ranged.hasAssignable(block));
  }
}
