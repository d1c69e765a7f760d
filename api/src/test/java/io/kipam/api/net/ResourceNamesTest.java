package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class ResourceNamesTest {

  // The validation Kubernetes applies to object names and label values (apimachinery).
  private static final Pattern DNS_1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-";

  @Test
  void encodesAddressesWithDashesAndIpv6WithAllEightGroups() {
    assertThat(ResourceNames.encode(IpAddress.parse("10.0.1.7"))).isEqualTo("10-0-1-7");
    assertThat(ResourceNames.encode(IpAddress.parse("2001:db8::1")))
        .isEqualTo("2001-db8-0-0-0-0-0-1");
    assertThat(ResourceNames.encode(IpAddress.parse("::"))).isEqualTo("0-0-0-0-0-0-0-0");
    assertThat(ResourceNames.encode(IpAddress.parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")))
        .hasSize(39);
    assertThat(ResourceNames.blockLabel(Cidr.parse("10.0.1.0/26"))).isEqualTo("10-0-1-0-26");
    assertThat(ResourceNames.blockName("pool-a", Cidr.parse("fd00::/120")))
        .isEqualTo("pool-a.fd00-0-0-0-0-0-0-0-120");
    assertThat(ResourceNames.addressName("pool-a", IpAddress.parse("10.0.1.7")))
        .isEqualTo("pool-a.10-0-1-7");
  }

  @Test
  void subClaimNameIsTheBlockNameOfTheAddressHostPrefix() {
    assertThat(ResourceNames.subClaimName("pool-a", IpAddress.parse("10.0.1.7")))
        .isEqualTo("pool-a.10-0-1-7-32");
    assertThat(ResourceNames.subClaimName("pool-a", IpAddress.parse("fd00::7")))
        .isEqualTo("pool-a.fd00-0-0-0-0-0-0-7-128");
    assertThat(ResourceNames.parseBlockName("pool-a.10-0-1-7-32"))
        .isEqualTo(new ResourceNames.BlockName("pool-a", Cidr.parse("10.0.1.7/32")));
  }

  @Test
  void subClaimNamesDependOnlyOnPoolAndAddress() {
    Cases.run(
        3_000,
        random -> {
          String pool = poolName(random);
          IpFamily family = RandomNets.family(random);
          IpAddress address = RandomNets.address(random, family);

          String name = ResourceNames.subClaimName(pool, address);
          assertThat(name)
              .isEqualTo(ResourceNames.subClaimName(pool, IpAddress.parse(address.toString())));
          assertThat(name).hasSizeLessThanOrEqualTo(253).matches(DNS_1123_SUBDOMAIN);
          ResourceNames.BlockName parsed = ResourceNames.parseBlockName(name);
          assertThat(parsed.pool()).isEqualTo(pool);
          assertThat(parsed.cidr().prefixLength()).isEqualTo(family.bits());
          assertThat(parsed.cidr().network()).isEqualTo(address);
          assertThatThrownBy(() -> ResourceNames.parseAddressName(name))
              .as("a sub-claim name is never an IPAddress name")
              .isInstanceOf(IllegalArgumentException.class);
        });
  }

  @Test
  void namesRoundTripAndAreValidKubernetesNamesAndLabels() {
    Cases.run(
        3_000,
        random -> {
          String pool = poolName(random);
          IpFamily family = RandomNets.family(random);
          IpAddress address = RandomNets.address(random, family);
          Cidr block = RandomNets.cidr(random, family, random.nextInt(family.bits() + 1));

          String encoded = ResourceNames.encode(address);
          assertThat(encoded).hasSizeLessThanOrEqualTo(39).matches("[0-9a-f].*[0-9a-f]");
          assertThat(encoded.split("-")).hasSize(family == IpFamily.V4 ? 4 : 8);
          assertThat(ResourceNames.decode(encoded)).isEqualTo(address);

          String label = ResourceNames.blockLabel(block);
          assertThat(label).hasSizeLessThanOrEqualTo(63).matches(LABEL_VALUE);
          assertThat(ResourceNames.parseBlockLabel(label)).isEqualTo(block);

          String addressName = ResourceNames.addressName(pool, address);
          String blockName = ResourceNames.blockName(pool, block);
          for (String name : new String[] {addressName, blockName}) {
            assertThat(name).hasSizeLessThanOrEqualTo(253).matches(DNS_1123_SUBDOMAIN);
          }
          assertThat(ResourceNames.parseAddressName(addressName))
              .isEqualTo(new ResourceNames.AddressName(pool, address))
              .hasToString(addressName);
          assertThat(ResourceNames.parseBlockName(blockName))
              .isEqualTo(new ResourceNames.BlockName(pool, block))
              .hasToString(blockName);
        });
  }

  /** Bijection: any text the parsers accept is exactly what the forward functions produce. */
  @Test
  void parsersAcceptOnlyTheImagesOfTheForwardFunctions() {
    Cases.run(
        3_000,
        random -> {
          IpFamily family = RandomNets.family(random);
          String pool = poolName(random);
          boolean asBlock = random.nextBoolean();
          String name =
              asBlock
                  ? ResourceNames.blockName(
                      pool, RandomNets.cidr(random, family, random.nextInt(family.bits() + 1)))
                  : ResourceNames.addressName(pool, RandomNets.address(random, family));
          String mutated = mutate(random, name);
          Function<String, Object> parse =
              asBlock ? ResourceNames::parseBlockName : ResourceNames::parseAddressName;
          Object parsed;
          try {
            parsed = parse.apply(mutated);
          } catch (IllegalArgumentException rejected) {
            assertThat(rejected).hasMessageStartingWith("'" + mutated + "'");
            return;
          }
          assertThat(parsed).as("parsed %s", mutated).hasToString(mutated);
        });
  }

  private static String mutate(Random random, String name) {
    StringBuilder text = new StringBuilder(name);
    int at = random.nextInt(text.length() + 1);
    switch (random.nextInt(5)) {
      case 0 -> text.insert(at, '0');
      case 1 -> text.insert(at, "-0");
      case 2 -> {
        if (at < text.length()) {
          text.deleteCharAt(at);
        }
      }
      case 3 -> {
        if (at < text.length()) {
          text.setCharAt(at, "0123456789abcdefAF-.g".charAt(random.nextInt(21)));
        }
      }
      default -> text.insert(at, ALPHABET.charAt(random.nextInt(ALPHABET.length())));
    }
    return text.toString();
  }

  private static String poolName(Random random) {
    int length = 1 + random.nextInt(random.nextBoolean() ? 63 : 8);
    StringBuilder name = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      boolean edge = i == 0 || i == length - 1;
      name.append(ALPHABET.charAt(random.nextInt(ALPHABET.length() - (edge ? 1 : 0))));
    }
    return name.toString();
  }

  static Stream<Arguments> rejectedNames() {
    return Stream.of(
        Arguments.of("pool.10-0-01-7", "field '01' is not a decimal 0-255 without leading zeros"),
        Arguments.of("pool.10-0-1-256", "field '256'"),
        Arguments.of("pool.10-0-1", "3 '-'-separated fields"),
        Arguments.of("pool.10-0-1-7-8", "5 '-'-separated fields"),
        Arguments.of("pool.10-0--7", "field ''"),
        Arguments.of("pool.10-0-1--7", "5 '-'-separated fields"),
        Arguments.of("pool.+1-0-0-0", "field '+1'"),
        Arguments.of("pool.2001-0db8-0-0-0-0-0-1", "field '0db8' is not lowercase hex"),
        Arguments.of("pool.2001-DB8-0-0-0-0-0-1", "field 'DB8'"),
        Arguments.of("pool.2001-db8-0-0-0-0-0-10000", "field '10000'"),
        Arguments.of("pool.2001-db8--1", "encoded IPv4 address: field '2001'"),
        Arguments.of("pool.2001-db8-0-0-0-1", "6 '-'-separated fields"),
        Arguments.of("pool.10.0.1.7", "1 '-'-separated fields"),
        Arguments.of("Pool.10-0-1-7", "pool name 'Pool' is not a DNS-1123 label"),
        Arguments.of("-pool.10-0-1-7", "is not a DNS-1123 label"),
        Arguments.of(".10-0-1-7", "a pool name is required"),
        Arguments.of("10-0-1-7", "it has no '.' after the pool name"),
        Arguments.of("a".repeat(64) + ".10-0-1-7", "has 64 characters"),
        Arguments.of("pool.10-0-1-7 ", "field '7 '"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rejectedNames")
  void rejectsAddressNamesTheEncoderNeverProduces(String name, String fragment) {
    assertThatThrownBy(() -> ResourceNames.parseAddressName(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("'" + name + "' is not an IPAddress name")
        .hasMessageContaining(fragment);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "pool.10-0-1-0-026",
        "pool.10-0-1-0-33",
        "pool.0-0-0-0-0-0-0-0-129",
        "pool.10-0-1-1-24",
        "pool.10-0-1-0",
        "pool.10-0-1-0-",
        "pool.10-0-1-0-+1",
        "pool.2001-db8-0-0-0-0-0-0-032",
        "pool.10-0-1-0-26.x"
      })
  void rejectsBlockNamesTheEncoderNeverProduces(String name) {
    assertThatThrownBy(() -> ResourceNames.parseBlockName(name))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("'" + name + "' is not an IPBlock name");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Pool", "-pool", "pool-", "po.ol", "pool_a", "pööl"})
  void rejectsPoolNamesThatAreNotDns1123Labels(String pool) {
    assertThatThrownBy(() -> ResourceNames.validatePoolName(pool))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ResourceNames.addressName(pool, IpAddress.parse("10.0.0.1")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void acceptsPoolNamesUpTo63Characters() {
    ResourceNames.validatePoolName("a".repeat(63));
    ResourceNames.validatePoolName("0");
    ResourceNames.validatePoolName("pool-v6-1");
    assertThatThrownBy(() -> ResourceNames.validatePoolName("a".repeat(64)))
        .hasMessageContaining("at most 63");
  }
}
