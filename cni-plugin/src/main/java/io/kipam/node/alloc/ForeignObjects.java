package io.kipam.node.alloc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * IPAddress objects of another node (or of no node, written by hand) that a fresh read found
 * holding a name this node wanted. The address is taken while such an object exists, but no watch
 * of this node tells when it goes, so each is read again now and then ({@link #due}) until a read
 * or a watch finds it gone ({@link #gone}). Bounded: once full, new ones are not remembered (their
 * address is still taken while the ledger holds the object). Not thread-safe; the {@link Ledger}
 * calls it under its monitor.
 */
final class ForeignObjects {

  /** One foreign object and when it was last read. */
  private static final class ForeignObject {
    final Lease lease;
    Instant checked;

    ForeignObject(Lease lease, Instant checked) {
      this.lease = lease;
      this.checked = checked;
    }
  }

  private final Map<ObjectRef, ForeignObject> foreign = new LinkedHashMap<>();
  private final int max;

  ForeignObjects(int max) {
    this.max = max;
  }

  /**
   * A fresh read (at {@code now}) found {@code lease}'s object: remembered, or its record renewed,
   * unless {@code max} others are remembered already.
   */
  void seen(Lease lease, Instant now) {
    if (foreign.containsKey(lease.object()) || foreign.size() < max) {
      foreign.put(lease.object(), new ForeignObject(lease, now));
    }
  }

  /** The foreign objects last read {@code every} ago or longer, marked as read {@code now}. */
  List<Lease> due(Duration every, Instant now) {
    List<Lease> due = new ArrayList<>();
    for (ForeignObject f : foreign.values()) {
      if (!f.checked.plus(every).isAfter(now)) {
        f.checked = now;
        due.add(f.lease);
      }
    }
    return due;
  }

  /** The object {@code ref} is gone: it is forgotten. */
  void gone(ObjectRef ref) {
    foreign.remove(ref);
  }

  boolean contains(ObjectRef ref) {
    return foreign.containsKey(ref);
  }

  int size() {
    return foreign.size();
  }
}
