package io.kipam.api.net;

import java.math.BigInteger;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Walks the values of from..to that an {@link Intervals} set does not hold, in ascending order and
 * lazily. It remembers which interval comes next, so skipping an interval costs O(1) whatever its
 * size, and a /64 block is never materialised.
 */
final class AssignableIterator implements Iterator<IpAddress> {

  private final IpFamily family;
  private final Intervals excluded;
  private final BigInteger to;
  private BigInteger cursor;
  private int nextInterval;

  AssignableIterator(IpFamily family, Intervals excluded, BigInteger from, BigInteger to) {
    this.family = family;
    this.excluded = excluded;
    this.to = to;
    this.cursor = from;
    this.nextInterval = excluded.firstEndingAtOrAfter(from);
    skipExcluded();
  }

  // Invariant: every interval before nextInterval ends before cursor.
  private void skipExcluded() {
    while (nextInterval < excluded.count() && excluded.low(nextInterval).compareTo(cursor) <= 0) {
      cursor = cursor.max(excluded.high(nextInterval).add(BigInteger.ONE));
      nextInterval++;
    }
  }

  @Override
  public boolean hasNext() {
    return cursor.compareTo(to) <= 0;
  }

  @Override
  public IpAddress next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    IpAddress current = IpAddress.of(family, cursor);
    // May step one past the family's last address; hasNext() then answers false.
    cursor = cursor.add(BigInteger.ONE);
    skipExcluded();
    return current;
  }
}
