package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

class PoolLayoutTest {

  private static final BigInteger TWO = BigInteger.TWO;

  private static PoolLayout pool(String cidr, int blockSize, String... excludes) {
    return PoolLayout.builder().cidr(cidr).blockSize(blockSize).exclude(List.of(excludes)).build();
  }

  private static Cidr cidr(String text) {
    return Cidr.parse(text);
  }

  private static IpAddress ip(String text) {
    return IpAddress.parse(text);
  }

  private static <T> List<T> first(Iterable<T> items, int n) {
    List<T> head = new ArrayList<>();
    for (Iterator<T> it = items.iterator(); it.hasNext() && head.size() < n; ) {
      head.add(it.next());
    }
    return head;
  }

  @Test
  void ipv4PoolNeverHandsOutItsNetworkOrBroadcastAddress() {
    PoolLayout layout = pool("10.0.0.0/24", 26);
    assertThat(layout.assignableCount()).isEqualTo(BigInteger.valueOf(254));
    assertThat(layout.isAssignable(ip("10.0.0.0"))).isFalse();
    assertThat(layout.isAssignable(ip("10.0.0.255"))).isFalse();
    assertThat(layout.isAssignable(ip("10.0.0.1"))).isTrue();
    // The reservation is the pool's, not each block's: inner block edges are ordinary addresses.
    assertThat(layout.isAssignable(ip("10.0.0.64"))).isTrue();
    assertThat(layout.assignableCount(cidr("10.0.0.0/26"))).isEqualTo(BigInteger.valueOf(63));
    assertThat(layout.assignableCount(cidr("10.0.0.64/26"))).isEqualTo(BigInteger.valueOf(64));
    assertThat(layout.assignableCount(cidr("10.0.0.192/26"))).isEqualTo(BigInteger.valueOf(63));
  }

  @Test
  void pointToPointAndHostRoutePoolsUseEveryAddress() {
    assertThat(pool("10.0.0.0/31", 32).assignableCount()).isEqualTo(TWO);
    assertThat(pool("10.0.0.7/32", 32).assignableCount()).isEqualTo(BigInteger.ONE);
    assertThat(pool("2001:db8::/127", 128).assignableCount()).isEqualTo(TWO);
    assertThat(pool("2001:db8::1/128", 128).assignableCount()).isEqualTo(BigInteger.ONE);
    assertThat(pool("255.255.255.254/31", 31).isAssignable(ip("255.255.255.255"))).isTrue();
    assertThat(pool("0.0.0.0/31", 32).isAssignable(ip("0.0.0.0"))).isTrue();
    // One step wider and the reservations apply again.
    assertThat(pool("10.0.0.0/30", 32).assignableCount()).isEqualTo(TWO);
    assertThat(pool("2001:db8::/126", 128).assignableCount()).isEqualTo(BigInteger.valueOf(3));
  }

  @Test
  void ipv6PoolReservesOnlyTheSubnetRouterAnycastAddress() {
    PoolLayout layout = pool("2001:db8::/64", 64);
    assertThat(layout.assignableCount()).isEqualTo(TWO.pow(64).subtract(BigInteger.ONE));
    assertThat(layout.isAssignable(ip("2001:db8::"))).isFalse();
    assertThat(layout.isAssignable(ip("2001:db8::ffff:ffff:ffff:ffff"))).isTrue();
    Cidr block = layout.block(BigInteger.ZERO);
    assertThat(first(layout.assignable(block), 3))
        .containsExactly(ip("2001:db8::1"), ip("2001:db8::2"), ip("2001:db8::3"));
  }

  @Test
  void slash64PoolCountsExactlyWithExcludesAndLargeBlocks() {
    PoolLayout layout = pool("2001:db8::/64", 80, "2001:db8::/96", "2001:db8:0:0:ffff::/80");
    assertThat(layout.blockCount()).isEqualTo(TWO.pow(16));
    assertThat(layout.assignableCount())
        .isEqualTo(TWO.pow(64).subtract(TWO.pow(32)).subtract(TWO.pow(48)));
    Cidr firstBlock = layout.block(BigInteger.ZERO);
    assertThat(layout.assignableCount(firstBlock)).isEqualTo(TWO.pow(48).subtract(TWO.pow(32)));
    assertThat(first(layout.assignable(firstBlock), 1)).containsExactly(ip("2001:db8::1:0:0"));
    IpAddress lastOfBlock = ip("2001:db8::ffff:ffff:ffff");
    assertThat(
            layout.assignableAt(
                firstBlock, layout.assignableCount(firstBlock).subtract(BigInteger.ONE)))
        .isEqualTo(lastOfBlock);
    Cidr lastBlock = layout.block(TWO.pow(16).subtract(BigInteger.ONE));
    assertThat(lastBlock).isEqualTo(cidr("2001:db8:0:0:ffff::/80"));
    assertThat(layout.hasAssignable(lastBlock)).isFalse();
    assertThat(layout.assignable(lastBlock)).isEmpty();
  }

  @Test
  void slash0PoolsCountEveryAddressButTheReservedOnes() {
    assertThat(pool("0.0.0.0/0", 24).assignableCount()).isEqualTo(TWO.pow(32).subtract(TWO));
    PoolLayout all6 = pool("::/0", 128);
    assertThat(all6.assignableCount()).isEqualTo(TWO.pow(128).subtract(BigInteger.ONE));
    assertThat(all6.blockCount()).isEqualTo(TWO.pow(128));
    BigInteger lastIndex = TWO.pow(128).subtract(BigInteger.ONE);
    assertThat(all6.block(lastIndex))
        .isEqualTo(cidr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"));
    assertThat(all6.blockIndexOf(ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")))
        .isEqualTo(lastIndex);
    assertThat(all6.hasAssignable(all6.block(BigInteger.ZERO))).isFalse();
    assertThat(first(all6.usableBlocks(), 1)).containsExactly(cidr("::1/128"));
    PoolLayout oneBlock = pool("::/0", 0);
    assertThat(oneBlock.blockCount()).isEqualTo(BigInteger.ONE);
    assertThat(oneBlock.assignableCount(cidr("::/0")))
        .isEqualTo(TWO.pow(128).subtract(BigInteger.ONE));
  }

  @Test
  void rangeLimitsAssignableAddressesAndBlocksOutsideItAreUnusable() {
    PoolLayout layout =
        PoolLayout.builder()
            .cidr("10.0.0.0/16")
            .rangeStart("10.0.1.10")
            .rangeEnd("10.0.1.100")
            .blockSize(26)
            .build();
    assertThat(layout.range()).hasToString("10.0.1.10-10.0.1.100");
    assertThat(layout.assignableCount()).isEqualTo(BigInteger.valueOf(91));
    assertThat(layout.usableBlocks()).containsExactly(cidr("10.0.1.0/26"), cidr("10.0.1.64/26"));
    assertThat(layout.hasAssignable(cidr("10.0.0.0/26"))).isFalse();
    assertThat(layout.assignableCount(cidr("10.0.1.64/26"))).isEqualTo(BigInteger.valueOf(37));
    assertThat(layout.isAssignable(ip("10.0.1.9"))).isFalse();
  }

  @Test
  void gatewayIsNeverAssignable() {
    PoolLayout inside =
        PoolLayout.builder().cidr("10.0.0.0/24").gateway("10.0.0.1").blockSize(24).build();
    assertThat(inside.isAssignable(ip("10.0.0.1"))).isFalse();
    assertThat(inside.assignableCount()).isEqualTo(BigInteger.valueOf(253));
    assertThat(first(inside.assignable(cidr("10.0.0.0/24")), 1)).containsExactly(ip("10.0.0.2"));
  }

  @Test
  void overlappingAndTouchingExcludesAreCountedOnce() {
    PoolLayout layout =
        pool("10.0.0.0/24", 24, "10.0.0.0/26", "10.0.0.32/27", "10.0.0.64/26", "10.0.0.130");
    // Excluded: .0-.127 and .130; reserved: .255.
    assertThat(layout.assignableCount()).isEqualTo(BigInteger.valueOf(256 - 128 - 1 - 1));
    assertThat(first(layout.assignable(cidr("10.0.0.0/24")), 3))
        .containsExactly(ip("10.0.0.128"), ip("10.0.0.129"), ip("10.0.0.131"));
  }

  @Test
  void iteratorAndUsableBlocksSkipHugeExcludesInOneStep() {
    PoolLayout v6 = pool("2001:db8::/64", 64, "2001:db8::/65");
    assertThat(first(v6.assignable(cidr("2001:db8::/64")), 2))
        .containsExactly(ip("2001:db8:0:0:8000::"), ip("2001:db8::8000:0:0:1"));
    PoolLayout hosts = pool("::/0", 128, "::/1");
    assertThat(first(hosts.usableBlocks(), 2))
        .containsExactly(cidr("8000::/128"), cidr("8000::1/128"));
    PoolLayout v4 = pool("10.0.0.0/8", 32, "10.0.0.0/9");
    assertThat(first(v4.usableBlocks(), 1)).containsExactly(cidr("10.128.0.0/32"));
  }

  @Test
  void iteratorEndsAtTheEndOfTheFamilyWithoutOverflow() {
    PoolLayout layout = pool("255.255.255.252/30", 30);
    Iterator<IpAddress> it = layout.assignable(cidr("255.255.255.252/30")).iterator();
    assertThat(it.next()).isEqualTo(ip("255.255.255.253"));
    assertThat(it.next()).isEqualTo(ip("255.255.255.254"));
    assertThat(it.hasNext()).isFalse();
    assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
    PoolLayout top = pool("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127", 128);
    assertThat(top.usableBlocks())
        .containsExactly(
            cidr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/128"),
            cidr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"));
  }

  @Test
  void blockQueriesRejectNetworksThatAreNotBlocksOfThePool() {
    PoolLayout layout = pool("10.0.0.0/24", 26);
    assertThatThrownBy(() -> layout.assignableCount(cidr("10.0.1.0/26")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "'10.0.1.0/26' is not a block of pool 10.0.0.0/24 with block size 26");
    assertThatThrownBy(() -> layout.assignable(cidr("10.0.0.0/25")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> layout.hasAssignable(cidr("::/26")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> layout.blockOf(ip("10.0.1.1")))
        .hasMessageContaining("'10.0.1.1' is outside the pool's cidr '10.0.0.0/24'");
    assertThatThrownBy(() -> layout.block(BigInteger.valueOf(4)))
        .hasMessageContaining("block index 4 is outside 0..3");
    assertThatThrownBy(() -> layout.assignableAt(cidr("10.0.0.0/26"), BigInteger.valueOf(63)))
        .hasMessageContaining("has 63 assignable addresses; index 63 is out of range");
  }
}
