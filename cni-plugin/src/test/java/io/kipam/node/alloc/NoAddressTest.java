package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NoAddressTest {

  private static PoolView pool(String cidr, int blockSize) {
    return new PoolView(
        "p", PoolLayout.builder().cidr(cidr).blockSize(blockSize).build(), Duration.ZERO, 0);
  }

  @Test
  void shortWhileThePoolCountsAFreeAddressAnywhere() {
    AllocationException e =
        NoAddress.refusal(
            pool("10.0.0.0/26", 28).withAvailable(BigInteger.valueOf(7)).withCount(T, null),
            "n1",
            1,
            "no slot left");

    assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_SHORT);
    assertThat(e.pool()).contains("p");
    assertThat(e.getMessage())
        .isEqualTo(
            "pool p has 7 free addresses, none of them reachable from node n1 yet: no slot left"
                + " (this node holds 1 blocks of the pool; the pool has 62 assignable addresses in"
                + " 4 blocks); its demand is recorded for kipam-operator, which makes a slot"
                + " Shared; try again");
  }

  private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void exhaustedOnlyWhenAFreshCountShowsNone() {
    AllocationException e =
        NoAddress.refusal(
            pool("10.0.0.0/26", 28).withAvailable(BigInteger.ZERO).withCount(T.plusSeconds(11), T),
            "n1",
            0,
            "no slot left");

    assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_EXHAUSTED);
    assertThat(e.getMessage())
        .isEqualTo(
            "pool p is exhausted for node n1: no slot left (this node holds 0 blocks of the"
                + " pool; the pool has 62 assignable addresses in 4 blocks)");
  }

  /**
   * The count ({@code available}, taken at {@code countedAt}, seconds after T) against this node's
   * last allocation or release in the pool ({@code lastChange}, seconds after T; empty: none).
   */
  @ParameterizedTest(name = "available {0} counted at +{1}s, last change +{2}s: {3}")
  @CsvSource({
    // not counted yet (a new pool), or counted by a kipam-operator that does not say when
    ",    ,    , NOT_COUNTED",
    ",   5,   0, NOT_COUNTED",
    "0,    ,    , NOT_COUNTED",
    "7,    ,    , NOT_COUNTED",
    // counted, nothing changed here since this daemon started
    "0,   5,    , EXHAUSTED",
    "7,   5,    , FREE_ELSEWHERE",
    // a count well after this node's last ADD or DEL includes it
    "0,  11,   0, EXHAUSTED",
    "5,  11,   0, FREE_ELSEWHERE",
    // a count before, at, or just after it may not: a release just freed an address, or the
    // last ADDs took the free ones it shows
    "0,   0,   1, STALE",
    "0,   1,   1, STALE",
    "0,  10,   0, STALE",
    "5,   0,   3, STALE",
  })
  void codeHundredOnlyOnACountFreshForTheQuestion(
      BigInteger available, Long countedAt, Long lastChange, NoAddress.Verdict expected) {
    PoolView pool =
        pool("10.0.0.0/26", 28)
            .withAvailable(available)
            .withCount(
                countedAt == null ? null : T.plusSeconds(countedAt),
                lastChange == null ? null : T.plusSeconds(lastChange));

    assertThat(NoAddress.verdict(pool)).isEqualTo(expected);
    AllocationException e = NoAddress.refusal(pool, "n1", 0, "no slot left");
    assertThat(e.reason())
        .isEqualTo(
            expected == NoAddress.Verdict.EXHAUSTED
                ? AllocationException.Reason.POOL_EXHAUSTED
                : AllocationException.Reason.POOL_SHORT);
  }

  @Test
  void aShortAnswerSaysWhatItWaitsFor() {
    PoolView uncounted = pool("10.0.0.0/26", 28);
    assertThat(NoAddress.refusal(uncounted, "n1", 0, "no slot left").getMessage())
        .startsWith(
            "pool p has no address node n1 can reach, and kipam-operator has not counted the pool"
                + " yet (status.available, status.countedAt): waiting for its count: no slot left")
        .endsWith("try again");

    PoolView stale =
        pool("10.0.0.0/26", 28).withAvailable(BigInteger.valueOf(5)).withCount(T, T.plusSeconds(3));
    assertThat(NoAddress.refusal(stale, "n1", 0, "no slot left").getMessage())
        .startsWith(
            "pool p has no address node n1 can reach; kipam-operator's last count (5 free, taken"
                + " at 2026-01-01T00:00:00Z) is not newer than this node's last allocation or"
                + " release in the pool (at 2026-01-01T00:00:03Z): waiting for a newer count: no"
                + " slot left")
        .endsWith("try again");
  }

  @Test
  void anIpv6PoolsBlocksAreCountedOnlyUpToABound() {
    assertThat(NoAddress.usableBlocks(pool("fd00::/64", 120)))
        .isEqualTo("more than " + NoAddress.USABLE_BLOCKS_COUNTED);
    assertThat(NoAddress.usableBlocks(pool("10.0.0.0/24", 26))).isEqualTo("4");
  }
}
