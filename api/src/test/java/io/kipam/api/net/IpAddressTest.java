package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

  private static final BigInteger V4_MAX = BigInteger.TWO.pow(32).subtract(BigInteger.ONE);
  private static final BigInteger V6_MAX = BigInteger.TWO.pow(128).subtract(BigInteger.ONE);

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0.0.0.0",
        "255.255.255.255",
        "10.0.1.7",
        "192.168.100.200",
        "::",
        "::1",
        "1::",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db8::1",
        "2001:db8:0:1:1:1:1:1",
        "2001:db8::1:0:0:1",
        "2001:0:0:1::1",
        "1:0:1:0:1:0:1:0",
        "fe80::",
        "::ffff:a00:1",
        "64:ff9b::c000:201",
        "1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6::",
        "::3:4:5:6:7:8"
      })
  void canonicalTextRoundTrips(String text) {
    assertThat(IpAddress.parse(text).toString()).isEqualTo(text);
    assertThat(IpAddress.parseLenient(text).toString()).isEqualTo(text);
  }

  @ParameterizedTest
  @CsvSource({
    "2001:DB8::1, 2001:db8::1",
    "2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
    "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
    "2001:db8::0:1, 2001:db8::1",
    "0:0:0:0:0:0:0:0, ::",
    "0::0, ::",
    "1:2:3:4:5:6:7::, 1:2:3:4:5:6:7:0",
    "::2:3:4:5:6:7:8, 0:2:3:4:5:6:7:8",
    "::ffff:10.0.0.1, ::ffff:a00:1",
    "::FFFF:192.168.1.1, ::ffff:c0a8:101",
    "64:ff9b::192.0.2.1, 64:ff9b::c000:201",
    "0:0:0:0:0:0:1.2.3.4, ::102:304",
    "FE80:0000::00AB, fe80::ab",
    "10.0.1.7, 10.0.1.7",
  })
  void lenientParsingNormalisesToCanonicalText(String lenient, String canonical) {
    assertThat(IpAddress.parseLenient(lenient).toString()).isEqualTo(canonical);
    if (lenient.equals(canonical)) {
      assertThat(IpAddress.parse(lenient)).hasToString(canonical);
    } else {
      assertThatThrownBy(() -> IpAddress.parse(lenient))
          .hasMessage("'" + lenient + "' is not canonical; write '" + canonical + "'");
    }
  }

  @Test
  void randomAddressesRoundTripThroughCanonicalAndExpandedText() {
    Cases.run(
        2_000,
        random -> {
          IpAddress address = RandomNets.address(random, RandomNets.family(random));
          String canonical = address.toString();
          assertThat(IpAddress.parse(canonical)).isEqualTo(address);
          assertThat(IpAddress.of(address.family(), address.toBigInteger())).isEqualTo(address);
          if (address.family() == IpFamily.V6) {
            String expanded = expanded(address);
            assertThat(IpAddress.parseLenient(expanded)).isEqualTo(address);
            assertThat(IpAddress.parseLenient(expanded.toUpperCase(Locale.ROOT)))
                .isEqualTo(address);
            assertThat(canonical).doesNotContain(":::").doesNotMatch(".*(^|:)0[0-9a-f].*");
          }
        });
  }

  private static String expanded(IpAddress address) {
    String hex = String.format("%032x", address.toBigInteger());
    return String.join(":", hex.split("(?<=\\G.{4})"));
  }

  @Test
  void nextAndPreviousStepByOneAndStopAtTheEdgesOfTheFamily() {
    IpAddress v4Last = IpAddress.parse("255.255.255.255");
    IpAddress v6First = IpAddress.parse("::");
    assertThat(IpAddress.parse("10.0.0.255").next()).hasToString("10.0.1.0");
    assertThat(IpAddress.parse("10.0.1.0").previous()).hasToString("10.0.0.255");
    assertThat(IpAddress.parse("::ffff").next()).hasToString("::1:0");
    assertThat(v4Last.previous().next()).isEqualTo(v4Last);
    assertThatThrownBy(v4Last::next)
        .isInstanceOf(ArithmeticException.class)
        .hasMessageContaining("255.255.255.255");
    assertThatThrownBy(IpAddress.parse("0.0.0.0")::previous)
        .isInstanceOf(ArithmeticException.class);
    assertThatThrownBy(v6First::previous).isInstanceOf(ArithmeticException.class);
    assertThatThrownBy(IpAddress.of(IpFamily.V6, V6_MAX)::next)
        .isInstanceOf(ArithmeticException.class);
  }

  @Test
  void addCoversTheWholeFamilyAndDetectsOverflow() {
    IpAddress zero4 = IpAddress.parse("0.0.0.0");
    IpAddress zero6 = IpAddress.parse("::");
    assertThat(zero4.add(V4_MAX)).hasToString("255.255.255.255");
    assertThat(zero6.add(V6_MAX)).hasToString("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    assertThat(IpAddress.parse("10.0.0.1").add(BigInteger.valueOf(-1))).hasToString("10.0.0.0");
    assertThatThrownBy(() -> zero4.add(V4_MAX.add(BigInteger.ONE)))
        .isInstanceOf(ArithmeticException.class);
    assertThatThrownBy(() -> zero6.add(V6_MAX.add(BigInteger.ONE)))
        .isInstanceOf(ArithmeticException.class);
  }

  @Test
  void ofRejectsValuesOutsideTheFamily() {
    assertThatThrownBy(() -> IpAddress.of(IpFamily.V4, V4_MAX.add(BigInteger.ONE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("IPv4");
    assertThatThrownBy(() -> IpAddress.of(IpFamily.V6, BigInteger.valueOf(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(IpAddress.of(IpFamily.V4, V4_MAX)).hasToString("255.255.255.255");
  }

  @Test
  void toBigIntegerIsTheUnsignedValue() {
    assertThat(IpAddress.parse("10.0.0.1").toBigInteger())
        .isEqualTo(BigInteger.valueOf(0x0a000001));
    assertThat(IpAddress.parse("255.255.255.255").toBigInteger()).isEqualTo(V4_MAX);
    assertThat(IpAddress.parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").toBigInteger())
        .isEqualTo(V6_MAX);
    assertThat(IpAddress.parse("::").toBigInteger()).isZero();
  }

  @Test
  void ordersIpv4BeforeIpv6AndOtherwiseNumerically() {
    assertThat(IpAddress.parse("255.255.255.255")).isLessThan(IpAddress.parse("::"));
    assertThat(IpAddress.parse("10.0.0.9")).isLessThan(IpAddress.parse("10.0.0.10"));
    assertThat(IpAddress.parse("2001:db8::9")).isLessThan(IpAddress.parse("2001:db8::a"));
    assertThat(IpAddress.parse("::a00:1")).isNotEqualTo(IpAddress.parse("10.0.0.1"));
  }

  @Test
  void recognisesIpv4MappedIpv6Addresses() {
    assertThat(IpAddress.parse("::ffff:a00:1").isIpv4MappedIpv6()).isTrue();
    assertThat(IpAddress.parse("::ffff:0:0").isIpv4MappedIpv6()).isTrue();
    assertThat(IpAddress.parse("::ffff:ffff:ffff").isIpv4MappedIpv6()).isTrue();
    assertThat(IpAddress.parse("::fffe:ffff:ffff").isIpv4MappedIpv6()).isFalse();
    assertThat(IpAddress.parse("::1:0:0:0").isIpv4MappedIpv6()).isFalse();
    assertThat(IpAddress.parse("10.0.0.1").isIpv4MappedIpv6()).isFalse();
    assertThat(IpAddress.parseLenient("::ffff:10.0.0.1").isIpv4MappedIpv6()).isTrue();
  }

  @Test
  void familyReportsTheBitWidth() {
    assertThat(IpAddress.parse("10.0.0.1").family()).isEqualTo(IpFamily.V4);
    assertThat(IpAddress.parse("::1").family()).isEqualTo(IpFamily.V6);
    assertThat(IpFamily.V4.bits()).isEqualTo(32);
    assertThat(IpFamily.V6.bits()).isEqualTo(128);
    assertThat(IpFamily.V6.addressCount()).isEqualTo(BigInteger.TWO.pow(128));
  }
}
