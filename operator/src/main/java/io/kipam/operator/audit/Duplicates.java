package io.kipam.operator.audit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Finds addresses held more than once within one network, in two passes over the IPAddresses. Pools
 * of one network may not overlap, so an address held twice in a network is held twice whatever
 * pools the holders name; pools of different networks may, so the network is part of the key.
 *
 * <p>The first pass ({@link #see}) keeps, per network, a 64-bit key of each address seen in a
 * growing array of longs: 8 to 16 bytes an address, no object per address and no holder (about 2 MB
 * at 150,000 addresses), the only part of the audit that grows with the allocations. Once the pass
 * is over the keys are sorted and the repeated ones are the addresses held more than once (a key
 * shared by two different addresses only makes the second pass look at both). Only when some are
 * ({@link #found}) does a second pass ({@link #collect}) gather every holder of those addresses
 * alone, by their exact text. Duplicates are rare, so the second pass is usually skipped.
 */
public final class Duplicates {

  /** One address of one network ({@code ""} for the pools without a network). */
  public record Slot(String network, String ip) {}

  /** An IPAddress holding a slot, and the pool it names. */
  public record Holder(AddressObject address, String pool) {}

  /** A growing array of keys. */
  private static final class Keys {
    long[] keys = new long[1024];
    int size;

    void add(long key) {
      if (size == keys.length) {
        keys = Arrays.copyOf(keys, keys.length * 2);
      }
      keys[size++] = key;
    }

    Set<Long> repeated() {
      Arrays.sort(keys, 0, size);
      Set<Long> repeated = new HashSet<>();
      for (int i = 1; i < size; i++) {
        if (keys[i] == keys[i - 1]) {
          repeated.add(keys[i]);
        }
      }
      return repeated;
    }
  }

  private final Map<String, Keys> seen = new HashMap<>();
  private Map<String, Set<Long>> repeated;
  private final Map<Slot, List<Holder>> holders = new HashMap<>();

  /** First pass: {@code ip} is held in {@code network}. */
  public void see(String network, String ip) {
    seen.computeIfAbsent(network, n -> new Keys()).add(key(ip));
    repeated = null;
  }

  /** Forgets what the first pass saw, for a pass that starts again. */
  public void forgetSeen() {
    seen.clear();
    repeated = null;
  }

  /** Forgets the holders the second pass gathered, for a pass that starts again. */
  public void forgetHolders() {
    holders.clear();
  }

  /** Whether the first pass found any address held more than once. */
  public boolean found() {
    return repeated().values().stream().anyMatch(keys -> !keys.isEmpty());
  }

  /** Second pass: {@code holder} holds {@code ip} in {@code network}; kept if it is a duplicate. */
  public void collect(String network, String ip, Holder holder) {
    Set<Long> keys = repeated().get(network);
    if (keys != null && keys.contains(key(ip))) {
      holders.computeIfAbsent(new Slot(network, ip), s -> new ArrayList<>()).add(holder);
    }
  }

  /**
   * Every address held more than once, with its holders (at least two each). An address that
   * changed between the passes so that only one holder is left is no duplicate.
   */
  public Map<Slot, List<Holder>> result() {
    Map<Slot, List<Holder>> result = new HashMap<>();
    holders.forEach(
        (slot, list) -> {
          if (list.size() > 1) {
            result.put(slot, List.copyOf(list));
          }
        });
    return result;
  }

  private Map<String, Set<Long>> repeated() {
    if (repeated == null) {
      repeated = new HashMap<>();
      seen.forEach((network, keys) -> repeated.put(network, keys.repeated()));
    }
    return repeated;
  }

  /** FNV-1a over the address's text: equal texts, equal keys. */
  static long key(String ip) {
    long hash = 0xcbf29ce484222325L;
    for (int i = 0; i < ip.length(); i++) {
      hash ^= ip.charAt(i);
      hash *= 0x100000001b3L;
    }
    return hash;
  }
}
