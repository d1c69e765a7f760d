package io.kipam.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RangeOrderRuleTest {

  @Test
  void unrolledRuleIsExactlyTheLoopOverBitPositions() {
    String expected =
        "!has(self.rangeStart) || !has(self.rangeEnd) || !isIP(self.rangeStart)"
            + " || !isIP(self.rangeEnd) || !ip.isCanonical(self.rangeStart)"
            + " || !ip.isCanonical(self.rangeEnd)"
            + " || ip(self.rangeStart).family() != ip(self.rangeEnd).family()"
            + " || !("
            + clauses(0, 32)
            + " || (ip(self.rangeStart).family() == 6 && ("
            + clauses(32, 128)
            + "))"
            + ")";
    assertThat(RangeOrderRule.RULE).isEqualTo(expected);
  }

  private static String clauses(int from, int to) {
    return IntStream.range(from, to)
        .mapToObj(
            p ->
                String.format(
                    "(cidr(self.rangeStart + '/%1$d').masked().containsIP(self.rangeEnd)"
                        + " && !cidr(self.rangeStart + '/%2$d').masked().containsIP(self.rangeEnd)"
                        + " && !cidr(self.rangeStart + '/%2$d').masked()"
                        + ".containsIP(cidr(self.rangeStart + '/%1$d').masked().ip()))",
                    p, p + 1))
        .collect(Collectors.joining(" || "));
  }
}
