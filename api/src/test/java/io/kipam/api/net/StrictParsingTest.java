package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every rejection quotes the input and says what is wrong, suggesting the fix where one exists. */
class StrictParsingTest {

  private static final Function<String, Object> ADDRESS = IpAddress::parse;
  private static final Function<String, Object> LENIENT = IpAddress::parseLenient;
  private static final Function<String, Object> CIDR = Cidr::parse;

  static Stream<Arguments> rejectedInputs() {
    return Stream.of(
        // IPv4 addresses
        reject(ADDRESS, "010.0.0.1", "octet '010' with a leading zero"),
        reject(LENIENT, "10.0.0.01", "octet '01' with a leading zero"),
        reject(ADDRESS, "10.0.0.256", "octet '256' out of range 0-255"),
        reject(ADDRESS, "10.0.0.1000", "octet '1000' out of range 0-255"),
        reject(ADDRESS, "10.0.0", "has 3 dot-separated parts; an IPv4 address has 4"),
        reject(ADDRESS, "10.0.0.0.1", "has 5 dot-separated parts"),
        reject(ADDRESS, "10..0.1", "has an empty octet"),
        reject(ADDRESS, "10.0.0.", "has an empty octet"),
        reject(ADDRESS, "10.0.0.x", "octet 'x' that is not a decimal number"),
        reject(ADDRESS, "10.0.0.+1", "octet '+1' that is not a decimal number"),
        reject(ADDRESS, "10.0.0.\u0661", "not a decimal number"),
        reject(ADDRESS, "167772161", "is not an IP address"),
        reject(ADDRESS, "", "'' has no address"),
        reject(ADDRESS, " 10.0.0.1", "leading or trailing whitespace; write '10.0.0.1'"),
        reject(ADDRESS, "10.0.0.0/24", "is a CIDR, not a single address"),
        // IPv6 addresses: non-canonical spellings, with the canonical one suggested
        reject(ADDRESS, "2001:DB8::1", "'2001:DB8::1' is not canonical; write '2001:db8::1'"),
        reject(ADDRESS, "2001:0db8::1", "write '2001:db8::1'"),
        reject(ADDRESS, "2001:db8:0:0:0:0:0:1", "write '2001:db8::1'"),
        reject(ADDRESS, "2001:db8::0:1", "write '2001:db8::1'"),
        reject(ADDRESS, "2001:db8::1:1:1:1:1", "write '2001:db8:0:1:1:1:1:1'"),
        reject(ADDRESS, "2001:db8:0::1:1:1:1", "write '2001:db8::1:1:1:1'"),
        reject(ADDRESS, "2001:db8::1:0:0:1:1", "write '2001:db8:0:1::1:1'"),
        reject(ADDRESS, "2001:db8:0:0:1::1", "write '2001:db8::1:0:0:1'"),
        reject(ADDRESS, "::ffff:10.0.0.1", "write '::ffff:a00:1'"),
        reject(ADDRESS, "::10.0.0.1", "write '::a00:1'"),
        reject(ADDRESS, "0:0:0:0:0:0:0:0", "write '::'"),
        // IPv6 addresses: not addresses at all
        reject(LENIENT, "fe80::1%eth0", "has a zone ID '%eth0'; zone IDs are not allowed"),
        reject(ADDRESS, "fe80::1%25eth0", "zone ID"),
        reject(LENIENT, "1::2::3", "has more than one '::'"),
        reject(LENIENT, "1:::2", "has ':::'"),
        reject(LENIENT, "1:2:3:4:5:6:7", "has 7 groups; an IPv6 address has 8"),
        reject(LENIENT, "1:2:3:4:5:6:7:8:9", "has more than 8 groups"),
        reject(LENIENT, "1:2:3:4::5:6:7:8", "8 groups besides '::'"),
        reject(LENIENT, ":1:2:3:4:5:6:7", "starts with a single ':'"),
        reject(LENIENT, "1:2:3:4:5:6:7:", "ends with a single ':'"),
        reject(LENIENT, "2001:db8::12345", "group '12345' with more than 4 hex digits"),
        reject(LENIENT, "2001:db8::g", "group 'g' that is not hexadecimal"),
        reject(LENIENT, "2001:db8::\uff21", "not hexadecimal"),
        reject(LENIENT, "::1.2.3.4:5", "IPv4 part '1.2.3.4' that is not at the end"),
        reject(LENIENT, "::ffff:10.0.0.256", "octet '256' out of range"),
        reject(LENIENT, "1:2:3:4:5:6:7:1.2.3.4", "has more than 8 groups"),
        reject(LENIENT, "[::1]", "not hexadecimal"),
        reject(LENIENT, null, "an IP address is required"),
        // CIDRs
        reject(
            CIDR, "10.0.0.1/24", "'10.0.0.1/24' has host bits set; the network is '10.0.0.0/24'"),
        reject(CIDR, "2001:db8::1/32", "host bits set; the network is '2001:db8::/32'"),
        reject(CIDR, "2001:DB8::1/32", "host bits set; the network is '2001:db8::/32'"),
        reject(CIDR, "2001:DB8::/32", "is not canonical; write '2001:db8::/32'"),
        reject(CIDR, "10.0.0.0/024", "is not canonical; write '10.0.0.0/24'"),
        reject(CIDR, "10.0.0.0/33", "prefix length 33; an IPv4 prefix length is 0 to 32"),
        reject(CIDR, "::/129", "prefix length is 0 to 128"),
        reject(CIDR, "10.0.0.0/99999999999", "prefix length 99999999999"),
        reject(CIDR, "10.0.0.0/", "prefix length '' that is not a decimal number"),
        reject(CIDR, "10.0.0.0/-1", "prefix length '-1' that is not a decimal number"),
        reject(CIDR, "10.0.0.0/24/24", "prefix length '24/24'"),
        reject(CIDR, "10.0.0.0", "has no prefix length; a single address is written '10.0.0.0/32'"),
        reject(CIDR, "/24", "has no address"),
        reject(CIDR, "010.0.0.0/8", "octet '010' with a leading zero"),
        reject(CIDR, "fe80::%eth0/64", "zone ID"),
        reject(
            CIDR, "::ffff:a00:0/104", "IPv4-mapped IPv6 range; write the IPv4 CIDR '10.0.0.0/8'"),
        reject(CIDR, "::ffff:0:0/96", "the IPv4 CIDR '0.0.0.0/0'"),
        reject(CIDR, "::ffff:10.0.0.0/104", "is not canonical; write '::ffff:a00:0/104'"),
        reject(CIDR, "10.0.0.0/24 ", "leading or trailing whitespace; write '10.0.0.0/24'"),
        reject(CIDR, "", "has no address"));
  }

  private static Arguments reject(Function<String, Object> parser, String input, String fragment) {
    String name =
        parser == ADDRESS ? "IpAddress.parse" : parser == LENIENT ? "parseLenient" : "Cidr.parse";
    return Arguments.of(name, input, parser, fragment);
  }

  @ParameterizedTest(name = "{0} rejects \"{1}\"")
  @MethodSource("rejectedInputs")
  void rejectsWithAMessageThatQuotesTheInputAndNamesTheProblem(
      String parserName, String input, Function<String, Object> parser, String fragment) {
    var thrown =
        assertThatThrownBy(() -> parser.apply(input))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(fragment);
    if (input != null) {
      thrown.hasMessageStartingWith("'" + input + "'");
    }
    if (parser == LENIENT && input != null) {
      // What lenient parsing refuses, strict parsing refuses too, for the same reason.
      assertThatThrownBy(() -> IpAddress.parse(input)).hasMessageContaining(fragment);
    }
  }
}
