package io.kipam.api.net;

import static io.kipam.api.net.Messages.quote;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * The geometry of one IPPool: its CIDR carved into blocks of {@link #blockSize()}, and which
 * addresses of it may be handed out. Immutable; built and validated by {@link #builder()}.
 *
 * <p>Blocks are numbered from 0 in address order and tile the pool's CIDR exactly. An address is
 * <em>assignable</em> if it lies in the pool's CIDR and range, is not inside any exclude, is not
 * the gateway, and is neither the pool's network address nor, for IPv4, its broadcast address. The
 * exception is a point-to-point or host-route pool (IPv4 /31 and /32, RFC 3021; IPv6 /127 and /128,
 * RFC 6164), where every address is assignable. The network and broadcast addresses are those of
 * the pool, not of each block: blocks are slices of one subnet. A block is usable only if it holds
 * at least one assignable address.
 *
 * <p>Every count is computed with interval arithmetic over the range minus the merged unassignable
 * intervals, never by visiting addresses, so a /64 pool answers 2^64 - 1 at once.
 */
public final class PoolLayout {

  private final Cidr cidr;
  private final AddressRange range;
  private final List<Cidr> excludes;
  private final Optional<IpAddress> gateway;
  private final int blockSize;
  private final Intervals unassignable;

  PoolLayout(
      Cidr cidr,
      AddressRange range,
      List<Cidr> excludes,
      Optional<IpAddress> gateway,
      int blockSize) {
    this.cidr = cidr;
    this.range = range;
    this.excludes = List.copyOf(excludes);
    this.gateway = gateway;
    this.blockSize = blockSize;
    this.unassignable = unassignable(cidr, excludes, gateway);
  }

  private static Intervals unassignable(
      Cidr cidr, List<Cidr> excludes, Optional<IpAddress> gateway) {
    List<Intervals.Interval> out = new ArrayList<>();
    excludes.forEach(e -> out.add(interval(e.first(), e.last())));
    gateway.filter(cidr::contains).ifPresent(g -> out.add(interval(g, g)));
    if (!isPointToPoint(cidr)) {
      out.add(interval(cidr.first(), cidr.first()));
      if (cidr.family() == IpFamily.V4) {
        out.add(interval(cidr.last(), cidr.last()));
      }
    }
    return Intervals.union(out);
  }

  private static Intervals.Interval interval(IpAddress low, IpAddress high) {
    return new Intervals.Interval(low.toBigInteger(), high.toBigInteger());
  }

  /** IPv4 /31 and /32 (RFC 3021) and IPv6 /127 and /128 (RFC 6164): no address is reserved. */
  private static boolean isPointToPoint(Cidr cidr) {
    return cidr.hostBits() <= 1;
  }

  /** A builder that validates a pool spec field by field. */
  public static PoolLayoutBuilder builder() {
    return new PoolLayoutBuilder();
  }

  public IpFamily family() {
    return cidr.family();
  }

  public Cidr cidr() {
    return cidr;
  }

  /** The range addresses are taken from: rangeStart..rangeEnd, defaulting to the whole CIDR. */
  public AddressRange range() {
    return range;
  }

  public List<Cidr> excludes() {
    return excludes;
  }

  public Optional<IpAddress> gateway() {
    return gateway;
  }

  /** The prefix length of every block, from the pool's prefix length to the host prefix. */
  public int blockSize() {
    return blockSize;
  }

  /** 2^(blockSize - prefixLength). */
  public BigInteger blockCount() {
    return BigInteger.ONE.shiftLeft(blockSize - cidr.prefixLength());
  }

  /** The {@code index}-th block (0-based, in address order), 0 to blockCount() - 1. */
  public Cidr block(BigInteger index) {
    if (index.signum() < 0 || index.compareTo(blockCount()) >= 0) {
      throw new IllegalArgumentException(
          "block index "
              + index
              + " is outside 0.."
              + blockCount().subtract(BigInteger.ONE)
              + " for pool "
              + cidr);
    }
    BigInteger offset = index.shiftLeft(family().bits() - blockSize);
    return Cidr.of(cidr.first().add(offset), blockSize);
  }

  /** The index of the block holding {@code address}, which must lie in the pool's CIDR. */
  public BigInteger blockIndexOf(IpAddress address) {
    if (!cidr.contains(address)) {
      throw new IllegalArgumentException(
          quote(address) + " is outside the pool's cidr " + quote(cidr));
    }
    BigInteger offset = address.toBigInteger().subtract(cidr.first().toBigInteger());
    return offset.shiftRight(family().bits() - blockSize);
  }

  /** The block holding {@code address}, which must lie in the pool's CIDR. */
  public Cidr blockOf(IpAddress address) {
    return block(blockIndexOf(address));
  }

  /** Whether {@code address} may be handed out; see the class documentation for the rule. */
  public boolean isAssignable(IpAddress address) {
    return range.contains(address) && !unassignable.contains(address.toBigInteger());
  }

  /** How many addresses of the pool are assignable. */
  public BigInteger assignableCount() {
    return countIn(range);
  }

  /** How many addresses of {@code block}, a block of this pool, are assignable. */
  public BigInteger assignableCount(Cidr block) {
    requireBlock(block);
    return window(block).map(this::countIn).orElse(BigInteger.ZERO);
  }

  /** Whether {@code block}, a block of this pool, is usable: it holds an assignable address. */
  public boolean hasAssignable(Cidr block) {
    return assignableCount(block).signum() > 0;
  }

  /**
   * The assignable addresses of {@code block}, a block of this pool, in ascending order. Lazy: each
   * iterator walks the block without materialising it, and skips each excluded interval in one
   * step.
   */
  public Iterable<IpAddress> assignable(Cidr block) {
    requireBlock(block);
    Optional<AddressRange> window = window(block);
    if (window.isEmpty()) {
      return List.of();
    }
    BigInteger from = window.get().start().toBigInteger();
    BigInteger to = window.get().end().toBigInteger();
    return () -> new AssignableIterator(family(), unassignable, from, to);
  }

  /**
   * The {@code index}-th (0-based) assignable address of {@code block}, a block of this pool, in
   * ascending order. Lets an allocator pick a uniformly random candidate from a block too large to
   * enumerate.
   *
   * @throws IllegalArgumentException if the index is not below {@link #assignableCount(Cidr)}
   */
  public IpAddress assignableAt(Cidr block, BigInteger index) {
    requireBlock(block);
    Optional<AddressRange> window = window(block);
    BigInteger value = null;
    if (window.isPresent() && index.signum() >= 0) {
      BigInteger from = window.get().start().toBigInteger();
      BigInteger to = window.get().end().toBigInteger();
      value = unassignable.nthOutside(from, to, index);
    }
    if (value == null) {
      throw new IllegalArgumentException(
          "block "
              + block
              + " has "
              + assignableCount(block)
              + " assignable addresses; index "
              + index
              + " is out of range");
    }
    return IpAddress.of(family(), value);
  }

  /**
   * The usable blocks (those holding an assignable address) in address order, lazily. Blocks
   * outside the range and runs of fully excluded blocks are skipped without visiting them.
   */
  public Iterable<Cidr> usableBlocks() {
    return UsableBlocks::new;
  }

  private final class UsableBlocks implements Iterator<Cidr> {
    private BigInteger from = range.start().toBigInteger();
    private Cidr next = advance();

    private Cidr advance() {
      BigInteger candidate = unassignable.firstOutsideAtOrAfter(from);
      if (candidate.compareTo(range.end().toBigInteger()) > 0) {
        return null;
      }
      Cidr block = blockOf(IpAddress.of(family(), candidate));
      from = block.last().toBigInteger().add(BigInteger.ONE);
      return block;
    }

    @Override
    public boolean hasNext() {
      return next != null;
    }

    @Override
    public Cidr next() {
      if (next == null) {
        throw new NoSuchElementException();
      }
      Cidr current = next;
      next = advance();
      return current;
    }
  }

  private BigInteger countIn(AddressRange window) {
    BigInteger from = window.start().toBigInteger();
    BigInteger to = window.end().toBigInteger();
    return window.size().subtract(unassignable.countWithin(from, to));
  }

  /** The part of {@code block} inside the range; empty if they do not meet. */
  private Optional<AddressRange> window(Cidr block) {
    return range.intersection(block);
  }

  private void requireBlock(Cidr block) {
    if (block.prefixLength() != blockSize || !cidr.contains(block)) {
      throw new IllegalArgumentException(
          quote(block) + " is not a block of pool " + cidr + " with block size " + blockSize);
    }
  }

  @Override
  public String toString() {
    return "PoolLayout{cidr="
        + cidr
        + ", range="
        + range
        + ", excludes="
        + excludes
        + ", gateway="
        + gateway.map(IpAddress::toString).orElse("none")
        + ", blockSize="
        + blockSize
        + "}";
  }
}
