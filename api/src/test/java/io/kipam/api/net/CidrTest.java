package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0.0.0.0/0",
        "10.0.0.0/8",
        "10.0.1.0/26",
        "255.255.255.255/32",
        "255.255.255.254/31",
        "::/0",
        "2001:db8::/32",
        "2001:db8:0:1::/64",
        "fd00::/8",
        "::1/128",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127",
        "::fffe:0:0/95",
        "::fffe:0:0/96"
      })
  void canonicalTextRoundTrips(String text) {
    assertThat(Cidr.parse(text)).hasToString(text);
  }

  @Test
  void sizeFirstAndLastCoverTheWholeNetworkWithoutOverflow() {
    Cidr all6 = Cidr.parse("::/0");
    assertThat(all6.size()).isEqualTo(BigInteger.TWO.pow(128));
    assertThat(all6.first()).hasToString("::");
    assertThat(all6.last()).hasToString("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    Cidr all4 = Cidr.parse("0.0.0.0/0");
    assertThat(all4.size()).isEqualTo(BigInteger.TWO.pow(32));
    assertThat(all4.last()).hasToString("255.255.255.255");
    Cidr host = Cidr.parse("255.255.255.255/32");
    assertThat(host.size()).isEqualTo(BigInteger.ONE);
    assertThat(host.first()).isEqualTo(host.last());
    assertThat(Cidr.parse("2001:db8::/64").size()).isEqualTo(BigInteger.TWO.pow(64));
    assertThat(Cidr.parse("10.0.1.0/26").last()).hasToString("10.0.1.63");
  }

  @Test
  void containsAndOverlapsFollowTheAddressRanges() {
    Cidr pool = Cidr.parse("10.0.0.0/16");
    assertThat(pool.contains(IpAddress.parse("10.0.255.255"))).isTrue();
    assertThat(pool.contains(IpAddress.parse("10.1.0.0"))).isFalse();
    assertThat(pool.contains(Cidr.parse("10.0.4.0/22"))).isTrue();
    assertThat(pool.contains(pool)).isTrue();
    assertThat(pool.contains(Cidr.parse("10.0.0.0/8"))).isFalse();
    assertThat(pool.overlaps(Cidr.parse("10.0.0.0/8"))).isTrue();
    assertThat(pool.overlaps(Cidr.parse("10.1.0.0/16"))).isFalse();
    assertThat(Cidr.parse("0.0.0.0/0").contains(IpAddress.parse("::"))).isFalse();
    assertThat(Cidr.parse("::/0").overlaps(Cidr.parse("0.0.0.0/0"))).isFalse();
    assertThat(Cidr.parse("::/0").contains(IpAddress.parse("::ffff:a00:1"))).isTrue();
  }

  @Test
  void randomNetworksAgreeWithTheirRangesOnContainmentAndOverlap() {
    Cases.run(
        2_000,
        random -> {
          IpFamily family = RandomNets.family(random);
          Cidr a = RandomNets.cidr(random, family, random.nextInt(family.bits() + 1));
          Cidr b =
              random.nextBoolean()
                  ? RandomNets.cidrIn(random, a, family.bits())
                  : RandomNets.cidr(random, family, random.nextInt(family.bits() + 1));
          IpAddress x = RandomNets.address(random, family);
          AddressRange ra = a.toRange();
          AddressRange rb = b.toRange();

          assertThat(Cidr.parse(a.toString())).isEqualTo(a);
          assertThat(a.size()).isEqualTo(ra.size());
          assertThat(a.contains(x)).isEqualTo(ra.contains(x));
          assertThat(a.contains(b)).isEqualTo(ra.contains(rb));
          assertThat(a.overlaps(b))
              .isEqualTo(b.overlaps(a))
              .isEqualTo(ra.intersection(rb).isPresent());
          assertThat(Cidr.enclosing(x, a.prefixLength()).contains(x)).isTrue();
          assertThat(Cidr.of(a.network(), a.prefixLength())).isEqualTo(a);
          assertThat(a.compareTo(b) == 0).isEqualTo(a.equals(b));
        });
  }

  @Test
  void ofRejectsHostBitsAndEnclosingMasksThem() {
    IpAddress address = IpAddress.parse("10.0.1.7");
    assertThat(Cidr.enclosing(address, 24)).hasToString("10.0.1.0/24");
    assertThat(Cidr.enclosing(address, 0)).hasToString("0.0.0.0/0");
    assertThat(Cidr.enclosing(address, 32)).hasToString("10.0.1.7/32");
    assertThatThrownBy(() -> Cidr.of(address, 24))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the network is '10.0.1.0/24'");
    assertThatThrownBy(() -> Cidr.enclosing(address, 33))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0-32");
  }

  @Test
  void ordersByNetworkThenPrefixLength() {
    assertThat(Cidr.parse("10.0.0.0/8")).isLessThan(Cidr.parse("10.0.0.0/24"));
    assertThat(Cidr.parse("10.0.0.0/24")).isLessThan(Cidr.parse("10.0.1.0/24"));
    assertThat(Cidr.parse("255.255.255.0/24")).isLessThan(Cidr.parse("::/0"));
  }
}
