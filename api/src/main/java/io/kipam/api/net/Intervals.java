package io.kipam.api.net;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A set of address values held as sorted, disjoint, non-adjacent closed intervals. Queries
 * binary-search the interval bounds, so their cost depends on the number of intervals (a pool's
 * excludes), never on how many addresses the intervals cover: a /64 costs what a /30 costs.
 */
final class Intervals {

  /** The values low..high, both included. */
  record Interval(BigInteger low, BigInteger high) {}

  private final BigInteger[] lows;
  private final BigInteger[] highs;

  private Intervals(List<Interval> merged) {
    lows = merged.stream().map(Interval::low).toArray(BigInteger[]::new);
    highs = merged.stream().map(Interval::high).toArray(BigInteger[]::new);
  }

  /** The union of {@code intervals}, which may overlap, touch or come in any order. */
  static Intervals union(List<Interval> intervals) {
    List<Interval> sorted = new ArrayList<>(intervals);
    sorted.sort(Comparator.comparing(Interval::low));
    List<Interval> merged = new ArrayList<>();
    for (Interval next : sorted) {
      Interval last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      // Touching intervals merge too, so a value just past an interval is never inside the next.
      if (last != null && next.low().compareTo(last.high().add(BigInteger.ONE)) <= 0) {
        merged.set(merged.size() - 1, new Interval(last.low(), last.high().max(next.high())));
      } else {
        merged.add(next);
      }
    }
    return new Intervals(merged);
  }

  int count() {
    return lows.length;
  }

  BigInteger low(int i) {
    return lows[i];
  }

  BigInteger high(int i) {
    return highs[i];
  }

  /** The index of the first interval that ends at or after {@code value}; count() if none. */
  int firstEndingAtOrAfter(BigInteger value) {
    int lo = 0;
    int hi = highs.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (highs[mid].compareTo(value) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  boolean contains(BigInteger value) {
    int i = firstEndingAtOrAfter(value);
    return i < lows.length && lows[i].compareTo(value) <= 0;
  }

  /** How many of the values from..to (both included) the set holds. */
  BigInteger countWithin(BigInteger from, BigInteger to) {
    BigInteger count = BigInteger.ZERO;
    for (int i = firstEndingAtOrAfter(from); i < lows.length && lows[i].compareTo(to) <= 0; i++) {
      BigInteger low = lows[i].max(from);
      BigInteger high = highs[i].min(to);
      count = count.add(high.subtract(low).add(BigInteger.ONE));
    }
    return count;
  }

  /** The smallest value at or after {@code from} that the set does not hold. */
  BigInteger firstOutsideAtOrAfter(BigInteger from) {
    int i = firstEndingAtOrAfter(from);
    // Intervals never touch, so the value after an interval is outside the set.
    return i < lows.length && lows[i].compareTo(from) <= 0 ? highs[i].add(BigInteger.ONE) : from;
  }

  /**
   * The {@code n}-th (0-based) value of from..to that the set does not hold, or null if there are
   * not that many. Walks only the intervals inside from..to.
   */
  BigInteger nthOutside(BigInteger from, BigInteger to, BigInteger n) {
    BigInteger cursor = from;
    BigInteger remaining = n;
    for (int i = firstEndingAtOrAfter(from); i < lows.length && lows[i].compareTo(to) <= 0; i++) {
      if (lows[i].compareTo(cursor) > 0) {
        BigInteger gap = lows[i].subtract(cursor);
        if (remaining.compareTo(gap) < 0) {
          return cursor.add(remaining);
        }
        remaining = remaining.subtract(gap);
      }
      cursor = cursor.max(highs[i].add(BigInteger.ONE));
    }
    BigInteger result = cursor.add(remaining);
    return result.compareTo(to) <= 0 ? result : null;
  }
}
