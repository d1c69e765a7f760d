package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * One node's view of its allocations: the blocks it holds, the blocks anyone holds, the leases of
 * its attachments, the addresses reserved by allocations in flight, and when each address was last
 * released. It is fed by the node's watches (and by the allocator's own successful writes) and is
 * the only mutable state of allocation; every method holds its monitor, so a pick and its
 * reservation are atomic, while API calls happen outside it.
 */
public final class Ledger {

  /** Blocks with at most this many assignable addresses are scanned for the least recently used. */
  static final BigInteger SCAN_LIMIT = BigInteger.valueOf(4096);

  private static final int RANDOM_PROBES = 64;

  private final String node;
  private final Clock clock;
  private final Map<String, Set<Cidr>> ownBlocks = new HashMap<>();
  private final Map<String, Set<Cidr>> takenBlocks = new HashMap<>();
  private final Set<String> drainingBlocks = new HashSet<>();
  private final Map<String, Lease> byAddress = new HashMap<>();
  private final Map<String, Lease> byAttachment = new HashMap<>();
  private final Set<String> reserved = new HashSet<>();
  private final Map<String, Instant> releasedAt = new HashMap<>();
  private final Map<String, Instant> firstSeen = new HashMap<>();
  private boolean synced;
  private ReleaseListener releaseListener = (pool, ip, at) -> {};

  /** Told of every release, so it can outlive the process (see {@code ReleaseJournal}). */
  @FunctionalInterface
  public interface ReleaseListener {
    void released(String pool, IpAddress ip, Instant at);
  }

  public Ledger(String node, Clock clock) {
    this.node = node;
    this.clock = clock;
  }

  public String node() {
    return node;
  }

  public synchronized void onRelease(ReleaseListener listener) {
    this.releaseListener = listener;
  }

  /** A release from before this process started, so its address still rests as it should. */
  public synchronized void restoreRelease(String pool, IpAddress ip, Instant at) {
    releasedAt.merge(addressKey(pool, ip), at, (a, b) -> a.isAfter(b) ? a : b);
  }

  // ---- fed by the watches ----

  public synchronized void blockSeen(String pool, Cidr block, String holder) {
    takenBlocks.computeIfAbsent(pool, p -> new HashSet<>()).add(block);
    if (node.equals(holder)) {
      ownBlocks.computeIfAbsent(pool, p -> new TreeSet<>()).add(block);
    }
  }

  public synchronized void blockGone(String pool, Cidr block) {
    takenBlocks.getOrDefault(pool, Set.of()).remove(block);
    ownBlocks.getOrDefault(pool, Set.of()).remove(block);
    drainingBlocks.remove(pool + "|" + block);
  }

  /** Marks a block as being released: nothing more is allocated from it. */
  public synchronized void drain(String pool, Cidr block, boolean draining) {
    if (draining) {
      drainingBlocks.add(pool + "|" + block);
    } else {
      drainingBlocks.remove(pool + "|" + block);
    }
  }

  public synchronized void leaseSeen(Lease lease) {
    firstSeen.putIfAbsent(addressKey(lease.pool(), lease.ip()), clock.instant());
    byAddress.put(addressKey(lease.pool(), lease.ip()), lease);
    byAttachment.put(attachmentKey(lease.pool(), lease.attachment()), lease);
  }

  /** An IPAddress is gone (deleted by kipam, or by the garbage collector with its pod). */
  public synchronized void leaseGone(String pool, IpAddress ip) {
    Lease gone = byAddress.remove(addressKey(pool, ip));
    firstSeen.remove(addressKey(pool, ip));
    if (gone != null) {
      byAttachment.remove(attachmentKey(pool, gone.attachment()), gone);
      Instant now = clock.instant();
      releasedAt.put(addressKey(pool, ip), now);
      releaseListener.released(pool, ip, now);
    }
  }

  public synchronized void markSynced() {
    synced = true;
  }

  public synchronized boolean synced() {
    return synced;
  }

  // ---- used by the allocator ----

  public synchronized Optional<Lease> leaseOf(String pool, Attachment attachment) {
    return Optional.ofNullable(byAttachment.get(attachmentKey(pool, attachment)));
  }

  /**
   * Whether this node has known {@code lease} for at least {@code age}; after a restart, ages count
   * from the restart, which only makes garbage collection more careful.
   */
  public synchronized boolean olderThan(Lease lease, java.time.Duration age) {
    Instant seen = firstSeen.get(addressKey(lease.pool(), lease.ip()));
    return seen != null && !seen.plus(age).isAfter(clock.instant());
  }

  public synchronized List<Lease> leases() {
    return List.copyOf(byAddress.values());
  }

  public synchronized List<Cidr> ownBlocks(String pool) {
    return List.copyOf(ownBlocks.getOrDefault(pool, Set.of()));
  }

  public synchronized boolean taken(String pool, Cidr block) {
    return takenBlocks.getOrDefault(pool, Set.of()).contains(block);
  }

  /**
   * Picks a free address in this node's blocks of {@code pool} and reserves it: not leased, not
   * reserved, not resting after a release; the least recently released first (never released counts
   * as longest ago). Blocks too large to scan are probed at random.
   */
  public synchronized Optional<Pick> reserveFree(PoolView pool, Random random) {
    Instant now = clock.instant();
    Pick best = null;
    Instant bestReleased = null;
    for (Cidr block : ownBlocks.getOrDefault(pool.name(), Set.of())) {
      if (drainingBlocks.contains(pool.name() + "|" + block)) {
        continue;
      }
      PoolLayout layout = pool.layout();
      if (layout.assignableCount(block).compareTo(SCAN_LIMIT) > 0) {
        Optional<IpAddress> probed = probe(pool, block, random, now);
        if (probed.isPresent()) {
          best = new Pick(block, probed.get());
          break;
        }
        continue;
      }
      for (IpAddress ip : layout.assignable(block)) {
        String key = addressKey(pool.name(), ip);
        if (!isFree(key, pool, now)) {
          continue;
        }
        Instant released = releasedAt.getOrDefault(key, Instant.EPOCH);
        if (bestReleased == null || released.isBefore(bestReleased)) {
          best = new Pick(block, ip);
          bestReleased = released;
        }
        if (released.equals(Instant.EPOCH)) {
          break;
        }
      }
      if (Instant.EPOCH.equals(bestReleased)) {
        break;
      }
    }
    if (best == null) {
      return Optional.empty();
    }
    reserved.add(addressKey(pool.name(), best.ip()));
    return Optional.of(best);
  }

  private Optional<IpAddress> probe(PoolView pool, Cidr block, Random random, Instant now) {
    BigInteger count = pool.layout().assignableCount(block);
    for (int i = 0; i < RANDOM_PROBES; i++) {
      BigInteger index = new BigInteger(count.bitLength() + 8, random).mod(count);
      IpAddress ip = pool.layout().assignableAt(block, index);
      if (isFree(addressKey(pool.name(), ip), pool, now)) {
        return Optional.of(ip);
      }
    }
    return Optional.empty();
  }

  private boolean isFree(String key, PoolView pool, Instant now) {
    if (byAddress.containsKey(key) || reserved.contains(key)) {
      return false;
    }
    Instant released = releasedAt.get(key);
    return released == null || !released.plus(pool.reuseDelay()).isAfter(now);
  }

  /** The allocation of a reserved address is written: it becomes a lease. */
  public synchronized void commit(Lease lease) {
    reserved.remove(addressKey(lease.pool(), lease.ip()));
    leaseSeen(lease);
  }

  /** The allocation of a reserved address failed: the address is free again. */
  public synchronized void unreserve(String pool, IpAddress ip) {
    reserved.remove(addressKey(pool, ip));
  }

  /** A lease this node deleted itself; the address rests from now on. */
  public synchronized void released(Lease lease) {
    leaseGone(lease.pool(), lease.ip());
  }

  /** Candidate blocks of {@code pool} nobody holds, in random order; at most {@code limit}. */
  public synchronized List<Cidr> unclaimedBlocks(PoolView pool, Random random, int limit) {
    PoolLayout layout = pool.layout();
    List<Cidr> candidates = new ArrayList<>();
    if (layout.blockCount().compareTo(BigInteger.valueOf(65536)) <= 0) {
      for (Cidr block : layout.usableBlocks()) {
        if (!taken(pool.name(), block)) {
          candidates.add(block);
        }
      }
      java.util.Collections.shuffle(candidates, random);
      return candidates.subList(0, Math.min(limit, candidates.size()));
    }
    BigInteger count = layout.blockCount();
    for (int i = 0; i < limit * 4 && candidates.size() < limit; i++) {
      Cidr block = layout.block(new BigInteger(count.bitLength() + 8, random).mod(count));
      if (!taken(pool.name(), block)
          && layout.hasAssignable(block)
          && !candidates.contains(block)) {
        candidates.add(block);
      }
    }
    return candidates;
  }

  /** A reserved address and the block it is in. */
  public record Pick(Cidr block, IpAddress ip) {}

  private static String addressKey(String pool, IpAddress ip) {
    return pool + "|" + ip;
  }

  private static String attachmentKey(String pool, Attachment a) {
    return pool + "|" + a.containerId() + "|" + a.ifName();
  }
}
