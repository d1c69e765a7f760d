package io.kipam.api.net;

import java.math.BigInteger;

/**
 * The two IP families. A value of {@link IpAddress}, {@link Cidr}, {@link AddressRange} or {@link
 * PoolLayout} belongs to exactly one family, and operations that combine two values of different
 * families either reject them or, for predicates such as {@link Cidr#contains(IpAddress)}, answer
 * {@code false}.
 */
public enum IpFamily {
  V4(32, "IPv4"),
  V6(128, "IPv6");

  private final int bits;
  private final String displayName;
  private final BigInteger addressCount;
  private final BigInteger maxValue;

  IpFamily(int bits, String displayName) {
    this.bits = bits;
    this.displayName = displayName;
    this.addressCount = BigInteger.ONE.shiftLeft(bits);
    this.maxValue = addressCount.subtract(BigInteger.ONE);
  }

  /** The address width in bits: 32 or 128. This is also the host prefix length (/32, /128). */
  public int bits() {
    return bits;
  }

  /** How many addresses the family has: 2^32 or 2^128. */
  public BigInteger addressCount() {
    return addressCount;
  }

  /** The largest address value: 2^bits - 1. */
  BigInteger maxValue() {
    return maxValue;
  }

  /** "IPv4" or "IPv6", the spelling used in messages. */
  public String displayName() {
    return displayName;
  }
}
