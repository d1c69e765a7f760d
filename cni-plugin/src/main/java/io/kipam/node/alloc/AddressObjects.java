package io.kipam.node.alloc;

import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The IPAddress objects a {@link Ledger} knows, by namespace and UID: which hold each address
 * (readable or not), which is each attachment's, since when each has been known, and which this
 * node deleted itself (so a late watch event cannot revive one). An event about an object changes
 * only that object's record: a replayed delete of an old holder never frees an address a new holder
 * has. Not thread-safe; the ledger calls it under its monitor.
 */
final class AddressObjects {

  private static final Logger log = LoggerFactory.getLogger(AddressObjects.class);

  /**
   * How long, and how many, objects this node deleted are remembered, so a late watch event cannot
   * revive one. The watch's own delete event ends each one within moments; the bounds only matter
   * while the watch is away.
   */
  static final Duration TOMBSTONE_TTL = Duration.ofMinutes(10);

  static final int MAX_TOMBSTONES = 4096;

  /** An attachment's claim on a pool: at most one address each. */
  private record AttachmentKey(String pool, Attachment attachment) {}

  private final Map<AddressKey, Map<ObjectRef, Lease>> holders = new HashMap<>();
  private final Map<AddressKey, Set<ObjectRef>> unreadable = new HashMap<>();
  private final Map<AttachmentKey, Lease> byAttachment = new HashMap<>();
  private final Map<ObjectRef, Instant> firstSeen = new HashMap<>();
  private final Map<ObjectRef, Instant> tombstones = new LinkedHashMap<>();

  /**
   * An IPAddress object exists (from a watch, a fresh read, or this node's own create), known since
   * {@code now} unless known already. Objects this node has deleted itself are not brought back by
   * a late event. An attachment's address stays the object it was until that object is gone.
   */
  void seen(Lease lease, Instant now) {
    ObjectRef ref = lease.object();
    if (tombstones.containsKey(ref)) {
      return;
    }
    firstSeen.putIfAbsent(ref, now);
    Map<ObjectRef, Lease> objects =
        holders.computeIfAbsent(lease.address(), k -> new LinkedHashMap<>());
    objects.put(ref, lease);
    if (objects.size() > 1) {
      log.error(
          "address {} of pool {} is held by {} IPAddress objects: {}; it stays taken until all"
              + " but one are gone",
          lease.ip(),
          lease.pool(),
          objects.size(),
          objects.keySet());
    }
    AttachmentKey key = new AttachmentKey(lease.pool(), lease.attachment());
    Lease current = byAttachment.get(key);
    if (current == null || current.object().equals(ref)) {
      byAttachment.put(key, lease);
    }
  }

  /**
   * An IPAddress object exists whose content this node cannot read, but whose name tells the
   * address: the address stays taken while it exists.
   */
  void unreadableSeen(AddressKey address, ObjectRef ref) {
    unreadable.computeIfAbsent(address, k -> new HashSet<>()).add(ref);
  }

  /**
   * The IPAddress object {@code ref} is gone (deleted by kipam, or by the garbage collector with
   * its pod). Only that object's record changes; an attachment whose address it was falls back on
   * another object of the same address it has, if any. True when it was the last readable holder of
   * {@code address}: the address rests from now on.
   */
  boolean gone(AddressKey address, ObjectRef ref) {
    tombstones.remove(ref);
    firstSeen.remove(ref);
    Set<ObjectRef> bad = unreadable.get(address);
    if (bad != null && bad.remove(ref) && bad.isEmpty()) {
      unreadable.remove(address);
    }
    Map<ObjectRef, Lease> objects = holders.get(address);
    Lease gone = objects == null ? null : objects.remove(ref);
    if (gone == null) {
      return false;
    }
    AttachmentKey key = new AttachmentKey(gone.pool(), gone.attachment());
    Lease current = byAttachment.get(key);
    if (current != null && current.object().equals(ref)) {
      byAttachment.remove(key);
    }
    if (objects.isEmpty()) {
      holders.remove(address);
      return true;
    }
    if (!byAttachment.containsKey(key)) {
      objects.values().stream()
          .filter(l -> l.attachment().equals(gone.attachment()))
          .findFirst()
          .ifPresent(l -> byAttachment.put(key, l));
    }
    return false;
  }

  /**
   * This node deleted the object {@code ref} itself (at {@code now}): a late watch event about it
   * is ignored. Remembered for {@link #TOMBSTONE_TTL}, and at most {@link #MAX_TOMBSTONES} of them.
   */
  void deleted(ObjectRef ref, Instant now) {
    tombstones.put(ref, now);
    Instant horizon = now.minus(TOMBSTONE_TTL);
    var oldest = tombstones.entrySet().iterator();
    while (oldest.hasNext()) {
      var entry = oldest.next();
      if (tombstones.size() <= MAX_TOMBSTONES && !entry.getValue().isBefore(horizon)) {
        break;
      }
      oldest.remove();
    }
  }

  /** Every pool's lease of {@code attachment}. */
  List<Lease> leasesOf(Attachment attachment) {
    List<Lease> of = new ArrayList<>();
    byAttachment.forEach(
        (key, lease) -> {
          if (key.attachment().equals(attachment)) {
            of.add(lease);
          }
        });
    return of;
  }

  Optional<Lease> leaseOf(String pool, Attachment attachment) {
    return Optional.ofNullable(byAttachment.get(new AttachmentKey(pool, attachment)));
  }

  /**
   * Whether {@code ref} has been known for at least {@code age} at {@code now}; after a restart,
   * ages count from the restart, which only makes garbage collection more careful.
   */
  boolean olderThan(ObjectRef ref, Duration age, Instant now) {
    Instant seen = firstSeen.get(ref);
    return seen != null && !seen.plus(age).isAfter(now);
  }

  /** Every readable object's lease but those {@code excluded}. */
  List<Lease> leases(Predicate<ObjectRef> excluded) {
    List<Lease> all = new ArrayList<>();
    for (Map<ObjectRef, Lease> objects : holders.values()) {
      objects.forEach(
          (ref, lease) -> {
            if (!excluded.test(ref)) {
              all.add(lease);
            }
          });
    }
    return all;
  }

  /** A readable object's lease of {@code address}, if one holds it. */
  Optional<Lease> holderOf(AddressKey address) {
    Map<ObjectRef, Lease> objects = holders.get(address);
    return objects == null ? Optional.empty() : objects.values().stream().findFirst();
  }

  /** The lease of object {@code ref}, if it is a recorded holder of {@code address}. */
  Optional<Lease> lease(AddressKey address, ObjectRef ref) {
    return Optional.ofNullable(holders.getOrDefault(address, Map.of()).get(ref));
  }

  /** Whether a readable object holds {@code address}. */
  boolean held(AddressKey address) {
    return holders.containsKey(address);
  }

  /** Whether {@code lease}'s object is recorded as a holder of its address. */
  boolean holds(Lease lease) {
    return holders.getOrDefault(lease.address(), Map.of()).containsKey(lease.object());
  }

  /** Whether any object, readable or not, holds {@code address}. */
  boolean taken(AddressKey address) {
    return holders.containsKey(address) || unreadable.containsKey(address);
  }

  /** Adds every address an object holds, readable or not, to {@code into}. */
  void addTakenTo(Set<AddressKey> into) {
    into.addAll(holders.keySet());
    into.addAll(unreadable.keySet());
  }

  /** Sizes of the bounded records, by name. */
  Map<String, Integer> sizes() {
    return Map.of(
        "holders", holders.size(),
        "attachments", byAttachment.size(),
        "firstSeen", firstSeen.size(),
        "tombstones", tombstones.size());
  }
}
