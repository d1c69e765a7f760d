package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import org.junit.jupiter.api.Test;

class AddressRangeTest {

  private static AddressRange range(String start, String end) {
    return AddressRange.of(IpAddress.parse(start), IpAddress.parse(end));
  }

  @Test
  void sizeCountsBothEndsAndReachesTwoToThe128() {
    assertThat(range("10.0.0.10", "10.0.0.19").size()).isEqualTo(BigInteger.TEN);
    assertThat(range("10.0.0.1", "10.0.0.1").size()).isEqualTo(BigInteger.ONE);
    assertThat(range("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").size())
        .isEqualTo(BigInteger.TWO.pow(128));
  }

  @Test
  void containsIncludesBothEndsAndNothingOfTheOtherFamily() {
    AddressRange r = range("10.0.0.10", "10.0.0.19");
    assertThat(r.contains(IpAddress.parse("10.0.0.10"))).isTrue();
    assertThat(r.contains(IpAddress.parse("10.0.0.19"))).isTrue();
    assertThat(r.contains(IpAddress.parse("10.0.0.9"))).isFalse();
    assertThat(r.contains(IpAddress.parse("10.0.0.20"))).isFalse();
    assertThat(r.contains(IpAddress.parse("::a00:a"))).isFalse();
    assertThat(r.contains(range("10.0.0.12", "10.0.0.19"))).isTrue();
    assertThat(r.contains(range("10.0.0.12", "10.0.0.20"))).isFalse();
  }

  @Test
  void intersectionWithACidrClipsToBoth() {
    AddressRange r = range("10.0.0.10", "10.0.0.200");
    assertThat(r.intersection(Cidr.parse("10.0.0.0/26"))).contains(range("10.0.0.10", "10.0.0.63"));
    assertThat(r.intersection(Cidr.parse("10.0.0.64/26")))
        .contains(range("10.0.0.64", "10.0.0.127"));
    assertThat(r.intersection(Cidr.parse("10.0.0.192/26")))
        .contains(range("10.0.0.192", "10.0.0.200"));
    assertThat(r.intersection(Cidr.parse("10.0.1.0/24"))).isEmpty();
    assertThat(r.intersection(Cidr.parse("::/0"))).isEmpty();
    assertThat(r.intersection(Cidr.parse("0.0.0.0/0"))).contains(r);
  }

  @Test
  void rejectsReversedAndMixedFamilyRanges() {
    assertThatThrownBy(() -> range("10.0.0.2", "10.0.0.1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("its start comes after its end");
    assertThatThrownBy(() -> range("10.0.0.1", "::1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mixes IPv4 and IPv6");
  }

  @Test
  void textIsStartDashEnd() {
    assertThat(range("2001:db8::a", "2001:db8::ff")).hasToString("2001:db8::a-2001:db8::ff");
  }
}
