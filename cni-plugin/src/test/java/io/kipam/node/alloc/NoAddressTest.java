package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class NoAddressTest {

  private static PoolView pool(String cidr, int blockSize) {
    return new PoolView(
        "p", PoolLayout.builder().cidr(cidr).blockSize(blockSize).build(), Duration.ZERO, 0);
  }

  @Test
  void shortWhileThePoolCountsAFreeAddressAnywhere() {
    AllocationException e =
        NoAddress.refusal(
            pool("10.0.0.0/26", 28).withAvailable(BigInteger.valueOf(7)), "n1", 1, "no slot left");

    assertThat(e.reason()).isEqualTo(AllocationException.Reason.POOL_SHORT);
    assertThat(e.pool()).contains("p");
    assertThat(e.getMessage())
        .isEqualTo(
            "pool p has 7 free addresses, none of them reachable from node n1 yet: no slot left"
                + " (this node holds 1 blocks of the pool; the pool has 62 assignable addresses in"
                + " 4 blocks); its demand is recorded for kipam-operator, which makes a slot"
                + " Shared; try again");
  }

  @Test
  void exhaustedWhenThePoolCountsNoneOrHasNotBeenCounted() {
    for (BigInteger available : new BigInteger[] {BigInteger.ZERO, null}) {
      AllocationException e =
          NoAddress.refusal(
              pool("10.0.0.0/26", 28).withAvailable(available), "n1", 0, "no slot left");

      assertThat(e.reason())
          .as("available %s", available)
          .isEqualTo(AllocationException.Reason.POOL_EXHAUSTED);
      assertThat(e.getMessage())
          .isEqualTo(
              "pool p is exhausted for node n1: no slot left (this node holds 0 blocks of the"
                  + " pool; the pool has 62 assignable addresses in 4 blocks)");
    }
  }

  @Test
  void anIpv6PoolsBlocksAreCountedOnlyUpToABound() {
    assertThat(NoAddress.usableBlocks(pool("fd00::/64", 120)))
        .isEqualTo("more than " + NoAddress.USABLE_BLOCKS_COUNTED);
    assertThat(NoAddress.usableBlocks(pool("10.0.0.0/24", 26))).isEqualTo("4");
  }
}
