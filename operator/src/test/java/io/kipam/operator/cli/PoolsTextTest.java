package io.kipam.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolsTextTest {

  @Test
  void theBarFillsInProportionAndNeverLooksEmptyWhenSomethingIsUsed() {
    assertThat(PoolsCommand.bar(0, BigInteger.valueOf(254)))
        .isEqualTo("[....................]   0%");
    assertThat(PoolsCommand.bar(1, BigInteger.valueOf(254)))
        .isEqualTo("[#...................]   0%");
    assertThat(PoolsCommand.bar(127, BigInteger.valueOf(254)))
        .isEqualTo("[##########..........]  50%");
    assertThat(PoolsCommand.bar(300, BigInteger.valueOf(254)))
        .isEqualTo("[####################] 100%");
    assertThat(PoolsCommand.bar(3, BigInteger.ZERO)).isEqualTo("[....................]    -");
    assertThat(PoolsCommand.bar(3, null)).isEqualTo("[....................]    -");
  }

  @Test
  void aPoolAndItsNodesAreTables() {
    String text =
        PoolsCommand.text(
            List.of(
                new PoolUsage(
                    "pods",
                    "10.0.0.0/24",
                    BigInteger.valueOf(254),
                    3,
                    BigInteger.valueOf(251),
                    1,
                    true,
                    List.of(new PoolUsage.NodeUsage("n1", 1, 0, BigInteger.valueOf(16), 3, 3)))));
    assertThat(text)
        .isEqualTo(
            """
            POOL  CIDR         SIZE  ALLOCATED  AVAILABLE  BLOCKS  USAGE
            pods  10.0.0.0/24  254   3          251        1       [#...................]   1%
              NODE  BLOCKS  SUB-CLAIMS  SIZE  ALLOCATED  IPADDRESSES  USAGE
              n1    1       0           16    3          3            [###.................]  18%
            """);
  }

  @Test
  void aMalformedAddressIsNamedOnceWithWhy() {
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> WhoHasCommand.parse("nope")))
        .hasMessage("'nope' is not an IP address (no '.' or ':')");
    assertThat(
            org.assertj.core.api.Assertions.catchThrowable(
                () -> WhoHasCommand.parse("10.66.0.256")))
        .hasMessage("'10.66.0.256' is not an IP address (has octet '256' out of range 0-255)");
  }

  @Test
  void ageReadsAsKubectlWritesIt() {
    assertThat(WhoHasCommand.age(Duration.ofSeconds(45))).isEqualTo("45s");
    assertThat(WhoHasCommand.age(Duration.ofSeconds(312))).isEqualTo("5m12s");
    assertThat(WhoHasCommand.age(Duration.ofMinutes(184))).isEqualTo("3h4m");
    assertThat(WhoHasCommand.age(Duration.ofHours(53))).isEqualTo("2d5h");
  }

  @Test
  void anyspellingOfAnAddressIsItsCanonicalForm() {
    assertThat(WhoHasCommand.parse("2001:DB8:0::1").toString()).isEqualTo("2001:db8::1");
    assertThat(WhoHasCommand.parse(" 10.0.0.7 ").toString()).isEqualTo("10.0.0.7");
  }
}
