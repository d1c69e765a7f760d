package io.kipam.api.net;

import static io.kipam.api.net.Messages.invalid;
import static io.kipam.api.net.Messages.isDecimal;
import static io.kipam.api.net.Messages.quote;

import java.math.BigInteger;
import java.util.Objects;

/**
 * A network: a network address and a prefix length (0-32 for IPv4, 0-128 for IPv6) with no host
 * bits set. Immutable; ordered by family, network address, then prefix length.
 *
 * <p>{@link #parse(String)} is the gate for user input and accepts only the canonical text
 * ("10.0.0.0/24", "2001:db8::/32"): a canonical address (see {@link IpAddress}), a prefix length
 * without leading zeros, no host bits set, and no IPv4-mapped IPv6 range (a pool of those would be
 * an IPv4 pool in disguise). {@link #of} and {@link #enclosing} build values in code and do not
 * apply that last rule.
 */
public final class Cidr implements Comparable<Cidr> {

  private static final Cidr IPV4_MAPPED =
      new Cidr(IpAddress.of(IpFamily.V6, BigInteger.valueOf(0xffff).shiftLeft(32)), 96);

  private final IpAddress network;
  private final int prefixLength;
  // Kept because blocks, contains() and ranges ask for it constantly.
  private final IpAddress last;

  private Cidr(IpAddress network, int prefixLength) {
    this.network = network;
    this.prefixLength = prefixLength;
    this.last = network.add(size().subtract(BigInteger.ONE));
  }

  /**
   * Parses canonical CIDR text; every other spelling is rejected with a message naming the fix
   * ("'10.0.0.1/24' has host bits set; the network is '10.0.0.0/24'").
   */
  public static Cidr parse(String text) {
    return parse(text, false);
  }

  /**
   * {@link #parse(String)}, optionally letting IPv4-mapped IPv6 ranges through: a pool's excludes
   * may name them, as that is how an IPv6 pool spanning ::ffff:0:0/96 keeps them out of use.
   */
  static Cidr parse(String text, boolean allowIpv4Mapped) {
    Messages.requirePlainText(text, "a CIDR", Cidr::parse);
    int slash = text.indexOf('/');
    if (slash < 0) {
      IpAddress single = AddressParser.parse(text, text);
      throw invalid(
          text,
          "has no prefix length; a single address is written "
              + quote(new Cidr(single, single.family().bits())));
    }
    IpAddress address = AddressParser.parse(text, text.substring(0, slash));
    int prefixLength = parsePrefixLength(text, text.substring(slash + 1), address.family());
    Cidr cidr = enclosing(address, prefixLength);
    // Host bits first: their fix also yields the canonical text.
    if (!cidr.network.equals(address)) {
      throw invalid(text, "has host bits set; the network is " + quote(cidr));
    }
    if (!cidr.toString().equals(text)) {
      throw invalid(text, "is not canonical; write " + quote(cidr));
    }
    if (!allowIpv4Mapped && IPV4_MAPPED.contains(cidr)) {
      throw invalid(
          text,
          "is an IPv4-mapped IPv6 range; write the IPv4 CIDR "
              + quote(unmapped(cidr))
              + " instead");
    }
    return cidr;
  }

  // Leading zeros pass here and are caught by the canonical-text check, which suggests the fix.
  private static int parsePrefixLength(String input, String text, IpFamily family) {
    if (!isDecimal(text)) {
      throw invalid(input, "has prefix length " + quote(text) + " that is not a decimal number");
    }
    if (new BigInteger(text).compareTo(BigInteger.valueOf(family.bits())) > 0) {
      throw invalid(
          input,
          "has prefix length "
              + text
              + "; an "
              + family.displayName()
              + " prefix length is 0 to "
              + family.bits());
    }
    return Integer.parseInt(text);
  }

  private static Cidr unmapped(Cidr mapped) {
    BigInteger v4 = mapped.network.toBigInteger().subtract(IPV4_MAPPED.network.toBigInteger());
    return new Cidr(IpAddress.of(IpFamily.V4, v4), mapped.prefixLength - 96);
  }

  /**
   * The network {@code network}/{@code prefixLength}.
   *
   * @throws IllegalArgumentException if the prefix length is out of range or host bits are set
   */
  public static Cidr of(IpAddress network, int prefixLength) {
    Cidr cidr = enclosing(network, prefixLength);
    if (!cidr.network.equals(network)) {
      throw new IllegalArgumentException(
          network + "/" + prefixLength + " has host bits set; the network is " + quote(cidr));
    }
    return cidr;
  }

  /** The network of length {@code prefixLength} that holds {@code address}. */
  public static Cidr enclosing(IpAddress address, int prefixLength) {
    Objects.requireNonNull(address, "address");
    IpFamily family = address.family();
    if (prefixLength < 0 || prefixLength > family.bits()) {
      throw new IllegalArgumentException(
          "prefix length "
              + prefixLength
              + " is outside 0-"
              + family.bits()
              + " for "
              + family.displayName());
    }
    int hostBits = family.bits() - prefixLength;
    BigInteger network = address.toBigInteger().shiftRight(hostBits).shiftLeft(hostBits);
    return new Cidr(IpAddress.of(family, network), prefixLength);
  }

  public IpFamily family() {
    return network.family();
  }

  /** The network address, which is also {@link #first()}. */
  public IpAddress network() {
    return network;
  }

  public int prefixLength() {
    return prefixLength;
  }

  /** The number of host bits: {@code family().bits() - prefixLength()}. */
  public int hostBits() {
    return family().bits() - prefixLength;
  }

  public IpAddress first() {
    return network;
  }

  public IpAddress last() {
    return last;
  }

  /** The number of addresses, 2^hostBits: exact even for an IPv6 /0 (2^128). */
  public BigInteger size() {
    return BigInteger.ONE.shiftLeft(hostBits());
  }

  /** The addresses of this network as a range. */
  public AddressRange toRange() {
    return AddressRange.of(first(), last());
  }

  /** True if {@code address} is of this family and inside this network. */
  public boolean contains(IpAddress address) {
    return address.family() == family()
        && network.compareTo(address) <= 0
        && address.compareTo(last) <= 0;
  }

  /** True if every address of {@code other} is inside this network (so also for equal networks). */
  public boolean contains(Cidr other) {
    return other.prefixLength >= prefixLength && contains(other.network);
  }

  /** True if the two networks share an address; networks of different families never do. */
  public boolean overlaps(Cidr other) {
    return contains(other.network) || other.contains(network);
  }

  @Override
  public int compareTo(Cidr other) {
    int byNetwork = network.compareTo(other.network);
    return byNetwork != 0 ? byNetwork : Integer.compare(prefixLength, other.prefixLength);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Cidr other
        && prefixLength == other.prefixLength
        && network.equals(other.network);
  }

  @Override
  public int hashCode() {
    return 31 * network.hashCode() + prefixLength;
  }

  /** The canonical text, e.g. "10.0.0.0/24" or "2001:db8::/32". */
  @Override
  public String toString() {
    return network + "/" + prefixLength;
  }
}
