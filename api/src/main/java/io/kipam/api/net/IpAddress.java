package io.kipam.api.net;

import static io.kipam.api.net.Messages.invalid;
import static io.kipam.api.net.Messages.quote;

import java.math.BigInteger;
import java.util.Objects;

/**
 * One IPv4 or IPv6 address: an immutable value of one {@link IpFamily}, ordered by family (IPv4
 * first) and then numerically.
 *
 * <p>{@link #toString()} is the canonical text: the dotted quad without leading zeros for IPv4, RFC
 * 5952 for IPv6 (lower case, no leading zeros in a group, the longest run of two or more zero
 * groups compressed to "::", the first such run if two are equally long, and never a dotted IPv4
 * tail). {@link #parse(String)} accepts exactly that text and nothing else, so one address has one
 * spelling in every resource kipam stores; {@link #parseLenient(String)} accepts every standard
 * spelling for input that kipam normalises (CNI configuration). Both reject zone IDs and IPv4
 * octets with leading zeros, and throw {@link IllegalArgumentException} with a message that quotes
 * the input and, where one exists, its canonical form.
 */
public final class IpAddress implements Comparable<IpAddress> {

  private static final BigInteger IPV4_MAPPED_PREFIX = BigInteger.valueOf(0xffff);

  private final IpFamily family;
  private final BigInteger value;

  private IpAddress(IpFamily family, BigInteger value) {
    this.family = family;
    this.value = value;
  }

  /**
   * Parses the canonical text of an address and rejects every other spelling, suggesting the
   * canonical one ("'2001:DB8::1' is not canonical; write '2001:db8::1'").
   */
  public static IpAddress parse(String text) {
    IpAddress address = parseLenient(text);
    String canonical = address.toString();
    if (!canonical.equals(text)) {
      throw invalid(text, "is not canonical; write " + quote(canonical));
    }
    return address;
  }

  /**
   * Parses any standard spelling of an address: upper case, leading zeros in IPv6 groups,
   * uncompressed or differently compressed IPv6, and dotted IPv4 tails ("::ffff:10.0.0.1"). Zone
   * IDs ("fe80::1%eth0") and IPv4 octets with leading zeros are still rejected. Use {@link
   * #toString()} on the result to normalise.
   */
  public static IpAddress parseLenient(String text) {
    Messages.requirePlainText(text, "an IP address", IpAddress::parseLenient);
    if (text.indexOf('/') >= 0) {
      throw invalid(text, "is a CIDR, not a single address");
    }
    return AddressParser.parse(text, text);
  }

  /** The address of {@code family} whose numeric value is {@code value} (0 to 2^bits - 1). */
  public static IpAddress of(IpFamily family, BigInteger value) {
    Objects.requireNonNull(family, "family");
    Objects.requireNonNull(value, "value");
    if (value.signum() < 0 || value.compareTo(family.maxValue()) > 0) {
      throw new IllegalArgumentException(
          value + " is not an " + family.displayName() + " address value");
    }
    return new IpAddress(family, value);
  }

  public IpFamily family() {
    return family;
  }

  /** The address as an unsigned number: 0 to 2^32 - 1 or 2^128 - 1. */
  public BigInteger toBigInteger() {
    return value;
  }

  /**
   * The address {@code delta} (which may be negative) further on.
   *
   * @throws ArithmeticException if the result would leave the family's address space
   */
  public IpAddress add(BigInteger delta) {
    BigInteger sum = value.add(delta);
    if (sum.signum() < 0 || sum.compareTo(family.maxValue()) > 0) {
      throw new ArithmeticException(
          this + " + " + delta + " is outside the " + family.displayName() + " address space");
    }
    return new IpAddress(family, sum);
  }

  /**
   * The next address.
   *
   * @throws ArithmeticException on the family's last address
   */
  public IpAddress next() {
    return add(BigInteger.ONE);
  }

  /**
   * The previous address.
   *
   * @throws ArithmeticException on the family's first address
   */
  public IpAddress previous() {
    return add(BigInteger.ONE.negate());
  }

  /**
   * True for IPv6 addresses in ::ffff:0:0/96, which stand for IPv4 addresses (RFC 4291 2.5.5.2).
   */
  public boolean isIpv4MappedIpv6() {
    return family == IpFamily.V6 && value.shiftRight(32).equals(IPV4_MAPPED_PREFIX);
  }

  /**
   * The numeric fields of the text form, most significant first: four octets for IPv4, eight 16-bit
   * groups for IPv6.
   */
  int[] fields() {
    int width = family == IpFamily.V4 ? 8 : 16;
    int[] fields = new int[family.bits() / width];
    for (int i = 0; i < fields.length; i++) {
      int shift = (fields.length - 1 - i) * width;
      fields[i] = value.shiftRight(shift).intValue() & ((1 << width) - 1);
    }
    return fields;
  }

  @Override
  public int compareTo(IpAddress other) {
    int byFamily = family.compareTo(other.family);
    return byFamily != 0 ? byFamily : value.compareTo(other.value);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IpAddress other && family == other.family && value.equals(other.value);
  }

  @Override
  public int hashCode() {
    return 31 * family.hashCode() + value.hashCode();
  }

  /** The canonical text; see the class documentation. */
  @Override
  public String toString() {
    return family == IpFamily.V4 ? dottedQuad(fields()) : rfc5952(fields());
  }

  private static String dottedQuad(int[] octets) {
    return octets[0] + "." + octets[1] + "." + octets[2] + "." + octets[3];
  }

  private static String rfc5952(int[] groups) {
    // The longest run of two or more zero groups; '>' keeps the first of equally long runs.
    int bestStart = -1;
    int bestLength = 1;
    for (int i = 0; i < groups.length; ) {
      int j = i;
      while (j < groups.length && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = Math.max(j, i + 1);
    }
    StringBuilder text = new StringBuilder(39);
    for (int i = 0; i < groups.length; i++) {
      if (i == bestStart) {
        text.append("::");
        i += bestLength - 1;
        continue;
      }
      if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
        text.append(':');
      }
      text.append(Integer.toHexString(groups[i]));
    }
    return text.toString();
  }
}
