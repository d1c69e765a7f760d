package io.kipam.api.net;

import java.math.BigInteger;
import java.util.Objects;
import java.util.Optional;

/**
 * The addresses from {@link #start()} to {@link #end()}, both included, of one family; never empty.
 * Immutable. Its text form is "start-end" ("10.0.0.10-10.0.0.99").
 */
public final class AddressRange {

  private final IpAddress start;
  private final IpAddress end;

  private AddressRange(IpAddress start, IpAddress end) {
    this.start = start;
    this.end = end;
  }

  /**
   * The range {@code start..end}.
   *
   * @throws IllegalArgumentException if the families differ or {@code start} comes after {@code
   *     end}
   */
  public static AddressRange of(IpAddress start, IpAddress end) {
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(end, "end");
    if (start.family() != end.family()) {
      throw new IllegalArgumentException(
          "range " + start + "-" + end + " mixes IPv4 and IPv6 addresses");
    }
    if (start.compareTo(end) > 0) {
      throw new IllegalArgumentException(
          "range " + start + "-" + end + " is empty: its start comes after its end");
    }
    return new AddressRange(start, end);
  }

  public IpAddress start() {
    return start;
  }

  public IpAddress end() {
    return end;
  }

  public IpFamily family() {
    return start.family();
  }

  /** The number of addresses, at least 1 and at most 2^128. */
  public BigInteger size() {
    return end.toBigInteger().subtract(start.toBigInteger()).add(BigInteger.ONE);
  }

  public boolean contains(IpAddress address) {
    return address.family() == family()
        && start.compareTo(address) <= 0
        && address.compareTo(end) <= 0;
  }

  /** True if every address of {@code other} lies in this range. */
  public boolean contains(AddressRange other) {
    return contains(other.start) && contains(other.end);
  }

  /** The addresses this range and {@code other} share; empty if none or the families differ. */
  public Optional<AddressRange> intersection(AddressRange other) {
    if (other.family() != family()) {
      return Optional.empty();
    }
    IpAddress from = max(start, other.start);
    IpAddress to = min(end, other.end);
    return from.compareTo(to) <= 0 ? Optional.of(new AddressRange(from, to)) : Optional.empty();
  }

  /** The addresses of this range inside {@code cidr}; empty if none or the families differ. */
  public Optional<AddressRange> intersection(Cidr cidr) {
    return intersection(cidr.toRange());
  }

  private static IpAddress max(IpAddress a, IpAddress b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static IpAddress min(IpAddress a, IpAddress b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AddressRange other && start.equals(other.start) && end.equals(other.end);
  }

  @Override
  public int hashCode() {
    return 31 * start.hashCode() + end.hashCode();
  }

  @Override
  public String toString() {
    return start + "-" + end;
  }
}
