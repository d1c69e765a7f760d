package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The blocks a {@link Ledger} knows: which blocks of each pool anyone holds (so claims skip them),
 * and for each block of this node the object it is and whether it is open for allocation. A block
 * of this node is closed while kipam-operator releases it ({@code Requested} or {@code Ready}, as
 * the node's block watch last showed it) and while this node retires it in order to delete it. Not
 * thread-safe; the ledger calls it under its monitor.
 */
final class NodeBlocks {

  /** One block of this node. */
  static final class Own {
    /** The latest the node's block watch showed of it, or what this node's claim created. */
    BlockObject object;

    /** Being deleted by this node: nothing is allocated from it, whatever its status says. */
    boolean retiring;

    /** A host-prefix block whose address went: it goes back once the address has rested. */
    boolean giveBack;

    Own(BlockObject object) {
      this.object = object;
    }

    BlockRef ref() {
      return object.ref();
    }

    boolean open() {
      return !retiring && !object.releasing();
    }
  }

  private final Map<String, Set<Cidr>> taken = new HashMap<>();
  private final Map<String, TreeMap<Cidr, Own>> own = new HashMap<>();

  /** Someone holds {@code block} (this node or another, or a claim's outcome is unknown). */
  void take(String pool, Cidr block) {
    taken.computeIfAbsent(pool, p -> new HashSet<>()).add(block);
  }

  boolean taken(String pool, Cidr block) {
    return taken.getOrDefault(pool, Set.of()).contains(block) || get(pool, block) != null;
  }

  /** This node's claim created {@code ref}; a record the watch made of it already stays. */
  Own claimed(BlockRef ref) {
    take(ref.pool(), ref.cidr());
    Own existing = get(ref.pool(), ref.cidr());
    if (existing != null && existing.ref().uid().equals(ref.uid())) {
      return existing;
    }
    Own fresh = new Own(new BlockObject(ref, null, false, null, null, null));
    own.computeIfAbsent(ref.pool(), p -> new TreeMap<>()).put(ref.cidr(), fresh);
    return fresh;
  }

  /**
   * The node's block watch shows {@code object}; returns its record, and whether that record is new
   * (the object was not known before).
   */
  Own seen(BlockObject object) {
    BlockRef ref = object.ref();
    take(ref.pool(), ref.cidr());
    Own existing = get(ref.pool(), ref.cidr());
    if (existing != null && existing.ref().uid().equals(ref.uid())) {
      existing.object = object;
      return existing;
    }
    Own fresh = new Own(object);
    own.computeIfAbsent(ref.pool(), p -> new TreeMap<>()).put(ref.cidr(), fresh);
    return fresh;
  }

  /**
   * The object {@code ref} is gone. A late event about an earlier object of the same name (its UID
   * differs) changes nothing of the block this node holds now.
   */
  void gone(BlockRef ref) {
    Own current = get(ref.pool(), ref.cidr());
    if (current != null) {
      if (!current.ref().uid().equals(ref.uid())) {
        return;
      }
      own.get(ref.pool()).remove(ref.cidr());
    }
    Set<Cidr> held = taken.get(ref.pool());
    if (held != null) {
      held.remove(ref.cidr());
    }
  }

  Own get(String pool, Cidr block) {
    TreeMap<Cidr, Own> blocks = own.get(pool);
    return blocks == null ? null : blocks.get(block);
  }

  /** This node's blocks of {@code pool}, in address order. */
  Iterable<Own> of(String pool) {
    TreeMap<Cidr, Own> blocks = own.get(pool);
    return blocks == null ? List.of() : blocks.values();
  }

  List<Cidr> cidrs(String pool) {
    TreeMap<Cidr, Own> blocks = own.get(pool);
    return blocks == null ? List.of() : List.copyOf(blocks.keySet());
  }

  /** Every block of this node. */
  List<Own> all() {
    List<Own> all = new ArrayList<>();
    own.values().forEach(blocks -> all.addAll(blocks.values()));
    return all;
  }

  /** This node's block of {@code pool} that contains {@code ip}, if any. */
  Own containing(AddressKey address) {
    TreeMap<Cidr, Own> blocks = own.get(address.pool());
    if (blocks == null) {
      return null;
    }
    var candidate = blocks.floorEntry(Cidr.of(address.ip(), address.ip().family().bits()));
    return candidate != null && candidate.getKey().contains(address.ip())
        ? candidate.getValue()
        : null;
  }
}
