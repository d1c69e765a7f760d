package io.kipam.api.net;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

/**
 * The invariants every {@link PoolLayout} must keep, checked against a {@link PoolCase}: blocks
 * tile the pool, block lookups invert block carving, and counts, iteration and indexing agree with
 * the assignability rule, by brute force where the pool is small and by segment sweep otherwise.
 */
final class PoolLayoutInvariants {

  /** Pools up to this many addresses are checked address by address. */
  static final BigInteger BRUTE_FORCE_LIMIT = BigInteger.valueOf(4096);

  private static final int FULL_BLOCK_CHECK_LIMIT = 512;
  private static final int SAMPLE = 20;
  private static final int BLOCK_SAMPLE = 8;

  private final PoolCase spec;
  private final PoolLayout layout;
  private final Random random;
  private final Violations violations = new Violations();

  private PoolLayoutInvariants(PoolCase spec, Random random) {
    this.spec = spec;
    this.layout = spec.layout();
    this.random = random;
  }

  static void check(PoolCase spec, Random random) {
    PoolLayoutInvariants check = new PoolLayoutInvariants(spec, random);
    check.specIsKept();
    check.blocksTileThePool();
    if (spec.cidr().size().compareTo(BRUTE_FORCE_LIMIT) <= 0) {
      check.agreesWithBruteForce();
    } else {
      check.agreesWithSweep();
    }
    check.violations.assertNone();
  }

  private void specIsKept() {
    Violations v = violations;
    v.expectEqual(layout.cidr(), spec.cidr(), "cidr");
    v.expectEqual(layout.family(), spec.cidr().family(), "family");
    v.expectEqual(layout.blockSize(), spec.blockSize(), "blockSize");
    v.expectEqual(layout.range().start(), spec.rangeStart().orElse(spec.cidr().first()), "start");
    v.expectEqual(layout.range().end(), spec.rangeEnd().orElse(spec.cidr().last()), "end");
    v.expectEqual(layout.excludes(), spec.excludes(), "excludes");
    v.expectEqual(layout.gateway(), spec.gateway(), "gateway");
  }

  /** Blocks are in address order, adjacent, of the block size and inside the pool. */
  private void blocksTileThePool() {
    Violations v = violations;
    Cidr cidr = layout.cidr();
    BigInteger count = layout.blockCount();
    BigInteger last = count.subtract(BigInteger.ONE);
    v.expectEqual(
        count, BigInteger.ONE.shiftLeft(layout.blockSize() - cidr.prefixLength()), "blockCount");
    v.expectEqual(layout.block(BigInteger.ZERO).first(), cidr.first(), "first block's start");
    v.expectEqual(layout.block(last).last(), cidr.last(), "last block's end");
    v.expectRejected(() -> layout.block(BigInteger.ONE.negate()), "block(-1)");
    v.expectRejected(() -> layout.block(count), "block(blockCount())");

    for (BigInteger n : blockIndexes(count)) {
      Cidr block = layout.block(n);
      v.expectEqual(block.prefixLength(), layout.blockSize(), "prefix length of block %s", n);
      v.expect(cidr.contains(block), "block %s (%s) lies inside the pool", n, block);
      v.expectEqual(layout.blockIndexOf(block.first()), n, "blockIndexOf(%s)", block.first());
      v.expectEqual(layout.blockIndexOf(block.last()), n, "blockIndexOf(%s)", block.last());
      IpAddress inside = RandomNets.addressIn(random, block);
      v.expectEqual(layout.blockOf(inside), block, "blockOf(%s)", inside);
      if (n.compareTo(last) < 0) {
        // Adjacent and in order: with the two ends checked above, the blocks tile the pool.
        IpAddress nextStart = layout.block(n.add(BigInteger.ONE)).first();
        v.expectEqual(nextStart, block.last().next(), "start of block after %s", block);
      }
    }
    BigInteger blockAddresses = layout.block(BigInteger.ZERO).size();
    for (int i = 0; i < SAMPLE; i++) {
      IpAddress address = RandomNets.addressIn(random, cidr);
      BigInteger offset = address.toBigInteger().subtract(cidr.first().toBigInteger());
      v.expectEqual(
          layout.blockIndexOf(address), offset.divide(blockAddresses), "index of %s", address);
      v.expect(layout.blockOf(address).contains(address), "blockOf(%s) holds it", address);
    }
    for (IpAddress outside : outsideNeighbours(cidr)) {
      v.expectRejected(() -> layout.blockIndexOf(outside), "blockIndexOf(%s)", outside);
      v.expect(!layout.isAssignable(outside), "%s outside the pool is not assignable", outside);
    }
  }

  private List<BigInteger> blockIndexes(BigInteger count) {
    TreeSet<BigInteger> indexes = new TreeSet<>();
    if (count.compareTo(BigInteger.valueOf(FULL_BLOCK_CHECK_LIMIT)) <= 0) {
      for (int i = 0; i < count.intValueExact(); i++) {
        indexes.add(BigInteger.valueOf(i));
      }
    } else {
      BigInteger last = count.subtract(BigInteger.ONE);
      indexes.addAll(List.of(BigInteger.ZERO, BigInteger.ONE, last.subtract(BigInteger.ONE), last));
      for (int i = 0; i < BLOCK_SAMPLE; i++) {
        indexes.add(RandomNets.below(random, count));
      }
    }
    return new ArrayList<>(indexes);
  }

  /** The addresses just before and after the pool, where the family has them. */
  private static List<IpAddress> outsideNeighbours(Cidr cidr) {
    List<IpAddress> outside = new ArrayList<>();
    if (cidr.first().toBigInteger().signum() > 0) {
      outside.add(cidr.first().previous());
    }
    if (!cidr.last().toBigInteger().equals(cidr.family().addressCount().subtract(BigInteger.ONE))) {
      outside.add(cidr.last().next());
    }
    return outside;
  }

  /** Every address of the pool is judged against the rule; every block is enumerated. */
  private void agreesWithBruteForce() {
    Violations v = violations;
    List<List<IpAddress>> perBlock = new ArrayList<>();
    for (int n = 0; n < layout.blockCount().intValueExact(); n++) {
      perBlock.add(new ArrayList<>());
    }
    int total = 0;
    for (IpAddress a = spec.cidr().first(); ; a = a.next()) {
      boolean expected = spec.assignable(a);
      v.expectEqual(layout.isAssignable(a), expected, "isAssignable(%s)", a);
      if (expected) {
        perBlock.get(layout.blockIndexOf(a).intValueExact()).add(a);
        total++;
      }
      if (a.equals(spec.cidr().last())) {
        break;
      }
    }
    v.expectEqual(layout.assignableCount(), BigInteger.valueOf(total), "assignableCount()");

    List<Cidr> usable = new ArrayList<>();
    for (int n = 0; n < perBlock.size(); n++) {
      Cidr block = layout.block(BigInteger.valueOf(n));
      List<IpAddress> expected = perBlock.get(n);
      BigInteger size = BigInteger.valueOf(expected.size());
      v.expectEqual(layout.assignableCount(block), size, "assignableCount(%s)", block);
      v.expectEqual(layout.hasAssignable(block), !expected.isEmpty(), "hasAssignable(%s)", block);
      List<IpAddress> iterated = new ArrayList<>();
      layout.assignable(block).forEach(iterated::add);
      v.expectEqual(iterated, expected, "assignable(%s)", block);
      for (int i = 0; i < expected.size(); i++) {
        BigInteger index = BigInteger.valueOf(i);
        v.expectEqual(
            layout.assignableAt(block, index), expected.get(i), "assignableAt(%s, %s)", block, i);
      }
      if (n == 0 || n == perBlock.size() - 1) {
        v.expectRejected(() -> layout.assignableAt(block, size), "assignableAt past the end");
      }
      if (!expected.isEmpty()) {
        usable.add(block);
      }
    }
    List<Cidr> usableBlocks = new ArrayList<>();
    layout.usableBlocks().forEach(usableBlocks::add);
    v.expectEqual(usableBlocks, usable, "usableBlocks()");
  }

  /** For pools too large to enumerate: counts and lookups against the segment sweep. */
  private void agreesWithSweep() {
    Violations v = violations;
    Cidr cidr = spec.cidr();
    List<AddressRange> runs = spec.assignableRuns(cidr.first(), cidr.last());
    v.expectEqual(layout.assignableCount(), PoolCase.count(runs), "assignableCount()");

    List<IpAddress> probes = new ArrayList<>();
    for (AddressRange run : runs) {
      probes.addAll(List.of(run.start(), run.end()));
      probes.addAll(outsideNeighbours(Cidr.of(run.start(), cidr.family().bits())));
      probes.addAll(outsideNeighbours(Cidr.of(run.end(), cidr.family().bits())));
    }
    for (int i = 0; i < SAMPLE; i++) {
      probes.add(RandomNets.addressIn(random, cidr));
    }
    for (IpAddress probe : probes) {
      v.expectEqual(layout.isAssignable(probe), spec.assignable(probe), "isAssignable(%s)", probe);
    }

    TreeSet<BigInteger> indexes = new TreeSet<>(blockIndexes(layout.blockCount()));
    // The blocks where runs start and end are where counting and skipping can go wrong.
    for (AddressRange run : runs.subList(0, Math.min(runs.size(), BLOCK_SAMPLE))) {
      indexes.add(layout.blockIndexOf(run.start()));
      indexes.add(layout.blockIndexOf(run.end()));
    }
    for (BigInteger n : indexes) {
      blockAgreesWithSweep(layout.block(n));
    }
    usableBlocksAgreeWithSweep(runs);
  }

  private void blockAgreesWithSweep(Cidr block) {
    Violations v = violations;
    List<AddressRange> runs = spec.assignableRuns(block.first(), block.last());
    BigInteger count = PoolCase.count(runs);
    v.expectEqual(layout.assignableCount(block), count, "assignableCount(%s)", block);
    v.expectEqual(layout.hasAssignable(block), count.signum() > 0, "hasAssignable(%s)", block);
    List<IpAddress> expectedHead = new ArrayList<>();
    for (int i = 0; i < SAMPLE; i++) {
      PoolCase.nth(runs, BigInteger.valueOf(i)).ifPresent(expectedHead::add);
    }
    List<IpAddress> head = new ArrayList<>();
    for (IpAddress a : layout.assignable(block)) {
      if (head.size() == SAMPLE) {
        break;
      }
      head.add(a);
    }
    v.expectEqual(head, expectedHead, "first assignable addresses of %s", block);
    if (count.signum() > 0) {
      for (BigInteger i :
          List.of(count.subtract(BigInteger.ONE), RandomNets.below(random, count))) {
        v.expectEqual(
            layout.assignableAt(block, i),
            PoolCase.nth(runs, i).orElseThrow(),
            "assignableAt(%s, %s)",
            block,
            i);
      }
    }
    v.expectRejected(() -> layout.assignableAt(block, count), "assignableAt past the end");
  }

  /** The first usable blocks are those holding the first assignable addresses, in order. */
  private void usableBlocksAgreeWithSweep(List<AddressRange> runs) {
    List<Cidr> expected = new ArrayList<>();
    for (AddressRange run : runs) {
      IpAddress cursor = run.start();
      while (expected.size() < 5 && run.contains(cursor)) {
        Cidr block = layout.blockOf(cursor);
        if (expected.isEmpty() || !expected.get(expected.size() - 1).equals(block)) {
          expected.add(block);
        }
        if (block.last().compareTo(run.end()) >= 0) {
          break;
        }
        cursor = block.last().next();
      }
    }
    List<Cidr> actual = new ArrayList<>();
    for (Cidr block : layout.usableBlocks()) {
      if (actual.size() == 5) {
        break;
      }
      actual.add(block);
    }
    // Fewer than five expected means the sweep found them all.
    violations.expectEqual(actual, expected, "first usable blocks");
  }
}
