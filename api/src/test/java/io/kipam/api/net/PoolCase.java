package io.kipam.api.net;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;

/**
 * A generated pool spec with the assignability rule written out independently of {@link
 * PoolLayout}, straight from its documented contract, as the oracle for property tests.
 */
record PoolCase(
    Cidr cidr,
    Optional<IpAddress> rangeStart,
    Optional<IpAddress> rangeEnd,
    List<Cidr> excludes,
    List<String> excludeTexts,
    Optional<IpAddress> gateway,
    int blockSize) {

  static PoolCase random(Random random, IpFamily family, int prefixLength) {
    Cidr cidr = RandomNets.cidr(random, family, prefixLength);
    int blockSize = prefixLength + random.nextInt(family.bits() - prefixLength + 1);
    IpAddress a = RandomNets.addressIn(random, cidr);
    IpAddress b = RandomNets.addressIn(random, cidr);
    IpAddress low = a.compareTo(b) <= 0 ? a : b;
    IpAddress high = a.compareTo(b) <= 0 ? b : a;
    Optional<IpAddress> start = random.nextInt(3) > 0 ? Optional.of(low) : Optional.empty();
    Optional<IpAddress> end = random.nextInt(3) > 0 ? Optional.of(high) : Optional.empty();
    if (random.nextInt(3) == 0) {
      start = Optional.empty();
      end = Optional.empty();
    }
    List<Cidr> excludes = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    for (int i = random.nextInt(5); i > 0; i--) {
      Cidr exclude = RandomNets.cidrIn(random, cidr, random.nextInt(cidr.hostBits() + 1));
      excludes.add(exclude);
      boolean single = exclude.hostBits() == 0 && random.nextBoolean();
      texts.add(single ? exclude.network().toString() : exclude.toString());
    }
    Optional<IpAddress> gateway =
        random.nextInt(3) == 0 ? Optional.empty() : Optional.of(RandomNets.addressIn(random, cidr));
    return new PoolCase(cidr, start, end, excludes, texts, gateway, blockSize);
  }

  PoolLayout layout() {
    return PoolLayout.builder()
        .cidr(cidr.toString())
        .rangeStart(rangeStart.map(IpAddress::toString).orElse(null))
        .rangeEnd(rangeEnd.map(IpAddress::toString).orElse(null))
        .exclude(excludeTexts)
        .gateway(gateway.map(IpAddress::toString).orElse(null))
        .blockSize(blockSize)
        .build();
  }

  /** The rule as PoolLayout's Javadoc states it. Plain loops: it runs for every address. */
  boolean assignable(IpAddress address) {
    if (!cidr.contains(address)
        || (rangeStart.isPresent() && address.compareTo(rangeStart.get()) < 0)
        || (rangeEnd.isPresent() && address.compareTo(rangeEnd.get()) > 0)
        || address.equals(gateway.orElse(null))) {
      return false;
    }
    for (Cidr exclude : excludes) {
      if (exclude.contains(address)) {
        return false;
      }
    }
    boolean v4 = cidr.family() == IpFamily.V4;
    boolean pointToPoint = cidr.prefixLength() >= (v4 ? 31 : 127);
    if (pointToPoint) {
      return true;
    }
    return !address.equals(cidr.first()) && !(v4 && address.equals(cidr.last()));
  }

  /**
   * The assignable addresses of from..to as maximal runs, found by testing one address per
   * elementary segment: between two consecutive boundaries of the spec's parts, every address is
   * treated alike by {@link #assignable}. Works for any pool size.
   */
  List<AddressRange> assignableRuns(IpAddress from, IpAddress to) {
    BigInteger low = from.toBigInteger();
    BigInteger end = to.toBigInteger().add(BigInteger.ONE);
    TreeSet<BigInteger> points = new TreeSet<>(List.of(low, end));
    List<IpAddress> starts = new ArrayList<>(List.of(cidr.first(), cidr.last()));
    rangeStart.ifPresent(starts::add);
    rangeEnd.ifPresent(starts::add);
    gateway.ifPresent(starts::add);
    excludes.forEach(e -> starts.addAll(List.of(e.first(), e.last())));
    for (IpAddress boundary : starts) {
      // Each boundary address both starts and ends an elementary segment.
      for (BigInteger p :
          List.of(boundary.toBigInteger(), boundary.toBigInteger().add(BigInteger.ONE))) {
        if (p.compareTo(low) > 0 && p.compareTo(end) < 0) {
          points.add(p);
        }
      }
    }
    List<AddressRange> runs = new ArrayList<>();
    BigInteger previous = null;
    for (BigInteger point : points) {
      if (previous != null && assignable(IpAddress.of(cidr.family(), previous))) {
        IpAddress first = IpAddress.of(cidr.family(), previous);
        IpAddress last = IpAddress.of(cidr.family(), point.subtract(BigInteger.ONE));
        AddressRange tail = runs.isEmpty() ? null : runs.get(runs.size() - 1);
        if (tail != null && tail.end().toBigInteger().add(BigInteger.ONE).equals(previous)) {
          runs.set(runs.size() - 1, AddressRange.of(tail.start(), last));
        } else {
          runs.add(AddressRange.of(first, last));
        }
      }
      previous = point;
    }
    return runs;
  }

  static BigInteger count(List<AddressRange> runs) {
    return runs.stream().map(AddressRange::size).reduce(BigInteger.ZERO, BigInteger::add);
  }

  /** The n-th address of the runs, or empty if they hold fewer. */
  static Optional<IpAddress> nth(List<AddressRange> runs, BigInteger n) {
    BigInteger remaining = n;
    for (AddressRange run : runs) {
      if (remaining.compareTo(run.size()) < 0) {
        return Optional.of(run.start().add(remaining));
      }
      remaining = remaining.subtract(run.size());
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return "pool "
        + cidr
        + " range "
        + rangeStart.map(Object::toString).orElse("-")
        + ".."
        + rangeEnd.map(Object::toString).orElse("-")
        + " exclude "
        + excludeTexts
        + " gateway "
        + gateway.map(Object::toString).orElse("-")
        + " blockSize "
        + blockSize;
  }
}
