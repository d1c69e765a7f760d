package io.kipam.operator.audit;

import java.util.ArrayList;
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
 * <p>The first pass ({@link #see}) keeps, per network, the set of addresses seen: memory
 * proportional to the allocations (one short string per address, no holder), the only part of the
 * audit that grows with them. It finds which addresses are held more than once but not all their
 * holders (the first was seen before anyone knew). Only when some are ({@link #found}) does a
 * second pass ({@link #collect}) gather every holder of those addresses alone. Duplicates are rare,
 * so the second pass is usually skipped.
 */
public final class Duplicates {

  /** One address of one network ({@code ""} for the pools without a network). */
  public record Slot(String network, String ip) {}

  /** An IPAddress holding a slot, and the pool it names. */
  public record Holder(AddressObject address, String pool) {}

  private final Map<String, Set<String>> seen = new HashMap<>();
  private final Set<Slot> duplicated = new HashSet<>();
  private final Map<Slot, List<Holder>> holders = new HashMap<>();

  /** First pass: {@code ip} is held in {@code network}. */
  public void see(String network, String ip) {
    if (!seen.computeIfAbsent(network, n -> new HashSet<>()).add(ip)) {
      duplicated.add(new Slot(network, ip));
    }
  }

  /** Forgets what the first pass saw, for a pass that starts again. */
  public void forgetSeen() {
    seen.clear();
    duplicated.clear();
  }

  /** Forgets the holders the second pass gathered, for a pass that starts again. */
  public void forgetHolders() {
    holders.clear();
  }

  /** Whether the first pass found any address held more than once. */
  public boolean found() {
    return !duplicated.isEmpty();
  }

  /** Second pass: {@code holder} holds {@code ip} in {@code network}; kept if it is a duplicate. */
  public void collect(String network, String ip, Holder holder) {
    Slot slot = new Slot(network, ip);
    if (duplicated.contains(slot)) {
      holders.computeIfAbsent(slot, s -> new ArrayList<>()).add(holder);
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
}
