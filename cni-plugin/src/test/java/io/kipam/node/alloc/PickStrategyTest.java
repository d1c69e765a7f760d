package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which free address {@link PickStrategy} hands out. */
class PickStrategyTest {

  private static final PoolLayout SMALL =
      PoolLayout.builder().cidr("10.0.0.0/24").blockSize(29).build();
  private static final Cidr FIRST = Cidr.parse("10.0.0.0/29");
  private static final Cidr SECOND = Cidr.parse("10.0.0.8/29");

  private static IpAddress ip(String s) {
    return IpAddress.parse(s);
  }

  @Test
  void aNeverReleasedAddressComesFirstInBlockOrder() {
    var pick =
        PickStrategy.leastRecentlyReleased(
            SMALL, List.of(FIRST, SECOND), ip -> true, ip -> Instant.EPOCH, new Random(1));

    assertThat(pick).contains(new Ledger.Pick(FIRST, SMALL.assignable(FIRST).iterator().next()));
  }

  @Test
  void theLeastRecentlyReleasedFreeAddressWinsAcrossBlocks() {
    Set<IpAddress> all = new HashSet<>();
    SMALL.assignable(FIRST).forEach(all::add);
    SMALL.assignable(SECOND).forEach(all::add);
    IpAddress oldest = ip("10.0.0.10");
    Map<IpAddress, Instant> released = new java.util.HashMap<>();
    all.forEach(a -> released.put(a, Instant.ofEpochSecond(1000)));
    released.put(oldest, Instant.ofEpochSecond(10));
    released.put(ip("10.0.0.3"), Instant.ofEpochSecond(5)); // older still, but not free

    var pick =
        PickStrategy.leastRecentlyReleased(
            SMALL,
            List.of(FIRST, SECOND),
            a -> !a.equals(ip("10.0.0.3")),
            released::get,
            new Random(1));

    assertThat(pick).contains(new Ledger.Pick(SECOND, oldest));
  }

  @Test
  void nothingFreeNothingPicked() {
    assertThat(
            PickStrategy.leastRecentlyReleased(
                SMALL, List.of(FIRST), ip -> false, ip -> Instant.EPOCH, new Random(1)))
        .isEmpty();
    assertThat(PickStrategy.atRandom(SMALL, List.of(FIRST, SECOND), ip -> false, new Random(1)))
        .isEmpty();
  }

  @Test
  void aBlockTooLargeToScanIsProbedAtRandom() {
    PoolLayout large = PoolLayout.builder().cidr("10.0.0.0/8").blockSize(16).build();
    Cidr block = Cidr.parse("10.1.0.0/16");
    assertThat(large.assignableCount(block)).isGreaterThan(PickStrategy.SCAN_LIMIT);

    var pick =
        PickStrategy.leastRecentlyReleased(
            large, List.of(block), ip -> true, ip -> Instant.EPOCH, new Random(3));

    assertThat(pick).isPresent();
    assertThat(pick.get().block()).isEqualTo(block);
    assertThat(block.contains(pick.get().ip())).isTrue();
    assertThat(PickStrategy.probe(large, block, ip -> false, new Random(3))).isEmpty();
  }

  @Test
  void aSharedSlotYieldsOneOfItsFreeAddressesAndSlotsOutsideThePoolAreSkipped() {
    Cidr outside = Cidr.parse("192.168.0.0/29");
    IpAddress only = ip("10.0.0.12");

    for (int seed = 0; seed < 20; seed++) {
      var pick =
          PickStrategy.atRandom(
              SMALL,
              List.of(outside, FIRST, SECOND),
              a -> a.equals(only) || outside.contains(a),
              new Random(seed));
      assertThat(pick).contains(new Ledger.Pick(SECOND, only));
    }
  }

  @Test
  void sharedSlotPicksSpreadOverTheFreeAddresses() {
    Set<IpAddress> seen = new HashSet<>();
    for (int seed = 0; seed < 50; seed++) {
      PickStrategy.atRandom(SMALL, List.of(FIRST), a -> true, new Random(seed))
          .ifPresent(p -> seen.add(p.ip()));
    }
    assertThat(seen).hasSizeGreaterThan(1).allMatch(FIRST::contains);
  }
}
