package io.kipam.api.net;

import java.math.BigInteger;
import java.util.Random;

/**
 * Random addresses and networks for property tests, biased towards the edges of the address space
 * (0.0.0.0, 255.255.255.255, ::, ffff:...:ffff) where off-by-one and overflow bugs live.
 */
final class RandomNets {

  private RandomNets() {}

  static IpFamily family(Random random) {
    return random.nextBoolean() ? IpFamily.V4 : IpFamily.V6;
  }

  /** Uniform in [0, bound). */
  static BigInteger below(Random random, BigInteger bound) {
    BigInteger value;
    do {
      value = new BigInteger(bound.bitLength(), random);
    } while (value.compareTo(bound) >= 0);
    return value;
  }

  /** Uniform in [low, high]. */
  static BigInteger between(Random random, BigInteger low, BigInteger high) {
    return low.add(below(random, high.subtract(low).add(BigInteger.ONE)));
  }

  static IpAddress address(Random random, IpFamily family) {
    BigInteger max = family.addressCount().subtract(BigInteger.ONE);
    BigInteger value =
        switch (random.nextInt(10)) {
          case 0 -> BigInteger.ZERO;
          case 1 -> max;
          case 2 -> BigInteger.valueOf(random.nextInt(3));
          case 3 -> max.subtract(BigInteger.valueOf(random.nextInt(3)));
          default -> below(random, family.addressCount());
        };
    return IpAddress.of(family, value);
  }

  static IpAddress addressIn(Random random, Cidr cidr) {
    BigInteger offset =
        switch (random.nextInt(6)) {
          case 0 -> BigInteger.ZERO;
          case 1 -> cidr.size().subtract(BigInteger.ONE);
          default -> below(random, cidr.size());
        };
    return cidr.first().add(offset);
  }

  static Cidr cidr(Random random, IpFamily family, int prefixLength) {
    return Cidr.enclosing(address(random, family), prefixLength);
  }

  /** A network inside {@code outer} whose size is at most 2^maxHostBits addresses. */
  static Cidr cidrIn(Random random, Cidr outer, int maxHostBits) {
    int bits = outer.family().bits();
    int shortest = Math.max(outer.prefixLength(), bits - maxHostBits);
    int prefixLength = shortest + random.nextInt(bits - shortest + 1);
    return Cidr.enclosing(addressIn(random, outer), prefixLength);
  }
}
