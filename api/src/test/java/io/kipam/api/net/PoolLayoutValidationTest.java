package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.InstanceOfAssertFactories.type;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class PoolLayoutValidationTest {

  private static PoolLayoutBuilder v4() {
    return PoolLayout.builder().cidr("10.0.0.0/24").blockSize(26);
  }

  static Stream<Arguments> invalidSpecs() {
    return Stream.of(
        invalid(PoolLayout.builder().blockSize(26), "spec.cidr", "required"),
        invalid(
            v4().cidr("10.0.0.1/24"),
            "spec.cidr",
            "'10.0.0.1/24' has host bits set; the network is '10.0.0.0/24'"),
        invalid(v4().cidr("2001:DB8::/64").blockSize(64), "spec.cidr", "write '2001:db8::/64'"),
        invalid(v4().cidr("::ffff:a00:0/120").blockSize(128), "spec.cidr", "IPv4-mapped"),
        invalid(v4().blockSize(20), "spec.blockSize", "20 is wider than the pool's /24"),
        invalid(v4().blockSize(33), "spec.blockSize", "33 is longer than the IPv4 host prefix"),
        invalid(v4().blockSize(-1), "spec.blockSize", "-1 is not a prefix length"),
        invalid(
            v4().rangeStart("10.0.1.5"),
            "spec.rangeStart",
            "'10.0.1.5' is not inside spec.cidr '10.0.0.0/24'"),
        invalid(v4().rangeStart("10.0.0.05"), "spec.rangeStart", "octet '05' with a leading zero"),
        invalid(
            v4().rangeEnd("2001:db8::1"),
            "spec.rangeEnd",
            "'2001:db8::1' is IPv6 but spec.cidr '10.0.0.0/24' is IPv4"),
        invalid(
            v4().rangeStart("10.0.0.9").rangeEnd("10.0.0.5"),
            "spec.rangeEnd",
            "'10.0.0.5' comes before spec.rangeStart '10.0.0.9'"),
        invalid(
            v4().exclude(List.of("10.0.0.0/30", "10.0.0.8", "10.1.0.0/24")),
            "spec.exclude[2]",
            "'10.1.0.0/24' is not inside spec.cidr '10.0.0.0/24'"),
        invalid(v4().exclude(List.of("10.0.0.0/23")), "spec.exclude[0]", "is not inside"),
        invalid(
            v4().exclude(List.of("10.0.0.0/30", "10.0.0.1/30")),
            "spec.exclude[1]",
            "'10.0.0.1/30' has host bits set; the network is '10.0.0.0/30'"),
        invalid(v4().exclude(List.of("::1")), "spec.exclude[0]", "is IPv6 but spec.cidr"),
        invalid(v4().exclude(Arrays.asList("10.0.0.1", null)), "spec.exclude[1]", "required"),
        invalid(v4().gateway("10.0.0.01"), "spec.gateway", "leading zero"),
        invalid(v4().gateway("fe80::1"), "spec.gateway", "is IPv6 but spec.cidr"),
        invalid(v4().gateway("169.254.1.1"), "spec.gateway", "is not inside spec.cidr"),
        invalid(v4().gateway("fe80::1%eth0"), "spec.gateway", "zone ID"));
  }

  private static Arguments invalid(PoolLayoutBuilder spec, String field, String fragment) {
    return Arguments.of(field, fragment, spec);
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("invalidSpecs")
  void rejectsAnInvalidSpecNamingTheField(String field, String fragment, PoolLayoutBuilder spec) {
    assertThatThrownBy(spec::build)
        .isInstanceOf(InvalidPoolSpecException.class)
        .hasMessageContaining(field + ": ")
        .hasMessageContaining(fragment)
        .asInstanceOf(type(InvalidPoolSpecException.class))
        .satisfies(
            e ->
                assertThat(e.errors())
                    .anySatisfy(
                        error -> {
                          assertThat(error.field()).isEqualTo(field);
                          assertThat(error.message()).contains(fragment);
                        }));
  }

  @Test
  void reportsEveryInvalidFieldAtOnceEvenWithoutAValidCidr() {
    PoolLayoutBuilder spec =
        PoolLayout.builder()
            .cidr("10.0.0.1/24")
            .blockSize(200)
            .rangeStart("10.0.0.010")
            .exclude(List.of("10.0.0.0/24", "x"))
            .gateway("10.0.0.1");
    assertThatThrownBy(spec::build)
        .hasMessageStartingWith("spec.cidr: '10.0.0.1/24' has host bits set")
        .asInstanceOf(type(InvalidPoolSpecException.class))
        .extracting(InvalidPoolSpecException::errors)
        .satisfies(
            errors ->
                assertThat(errors)
                    .extracting(InvalidPoolSpecException.FieldError::field)
                    .containsExactly(
                        "spec.cidr", "spec.blockSize", "spec.rangeStart", "spec.exclude[1]"));
  }

  @Test
  void acceptsAValidSpecAndDefaultsTheRangeToTheWholeCidr() {
    PoolLayout layout =
        PoolLayout.builder()
            .cidr("2001:db8::/64")
            .blockSize(120)
            .rangeStart("2001:db8::100")
            .exclude(null)
            .gateway("2001:db8::1")
            .build();
    assertThat(layout.range()).hasToString("2001:db8::100-2001:db8::ffff:ffff:ffff:ffff");
    assertThat(layout.excludes()).isEmpty();
    assertThat(layout.gateway()).contains(IpAddress.parse("2001:db8::1"));
  }

  @ParameterizedTest(name = "{0} defaults to /{1}")
  @CsvSource({
    "10.0.0.0/16, 26",
    "10.0.0.0/26, 26",
    "10.0.0.0/28, 28",
    "10.0.0.1/32, 32",
    "2001:db8::/64, 122",
    "2001:db8::/125, 125"
  })
  void anAbsentBlockSizeDefaultsTo64AddressesOrTheWholePool(String cidr, int expected) {
    PoolLayout layout = PoolLayout.builder().cidr(cidr).blockSize(null).build();
    assertThat(layout.blockSize()).isEqualTo(expected);
    assertThat(PoolLayoutBuilder.defaultBlockSize(Cidr.parse(cidr))).isEqualTo(expected);
  }

  @Test
  void anIpv6PoolSpanningMappedAddressesMayExcludeThem() {
    PoolLayout layout =
        PoolLayout.builder().cidr("::/64").blockSize(64).exclude(List.of("::ffff:0:0/96")).build();
    assertThat(layout.isAssignable(IpAddress.parse("::ffff:a00:1"))).isFalse();
    assertThat(layout.assignableCount())
        .isEqualTo(
            BigInteger.TWO.pow(64).subtract(BigInteger.TWO.pow(32)).subtract(BigInteger.ONE));
  }
}
