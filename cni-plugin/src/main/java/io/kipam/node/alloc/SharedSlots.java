package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What a node knows of the slots of its pools and of their sub-claims, from the latest listing of
 * each pool, the node's own block watch and the answers to its claims (design §6: a node watches no
 * other node's blocks): which slots are Shared (and not being deleted), and which addresses a
 * sub-claim holds, whoever's and under whatever parent. An address with a sub-claim is taken for
 * every node: the holder of an Exclusive parent never hands it out from memory, and no node claims
 * it again (holes 1 and 5 of the shared-slots design). Not thread-safe; the ledger calls it under
 * its monitor.
 */
final class SharedSlots {

  /** A slot of a pool: its object, and whether it is Shared and whether it is being deleted. */
  record Slot(Cidr cidr, String uid, boolean shared, boolean deleting) {
    boolean usable() {
      return shared && !deleting;
    }
  }

  /** A sub-claim: its object (null UID: a 409 told of it, no watch yet) and its parent's name. */
  private record SubClaim(String uid, String parent) {}

  private final Map<String, Map<Cidr, Slot>> slots = new HashMap<>();
  private final Map<AddressKey, SubClaim> subClaims = new HashMap<>();

  /**
   * A slot of {@code pool} (any node's, or no node's), from the pool's block watch: Shared when its
   * {@code status.mode} is Shared or it has no {@code spec.node}; deleting when it has a
   * deletionTimestamp.
   */
  void slotSeen(String pool, Slot slot) {
    slots.computeIfAbsent(pool, p -> new HashMap<>()).put(slot.cidr(), slot);
  }

  /**
   * A sub-claim (any node's) of {@code address}, under the slot named {@code parent}, from the
   * pool's block watch: the address is taken for every node, whatever this node knows of the
   * parent.
   */
  void subClaimSeen(AddressKey address, String uid, String parent) {
    subClaims.put(address, new SubClaim(uid, parent));
  }

  /** A create of {@code address}'s sub-claim answered 409: someone holds it. */
  void subClaimTaken(AddressKey address) {
    subClaims.putIfAbsent(address, new SubClaim(null, null));
  }

  boolean subClaimed(AddressKey address) {
    return subClaims.containsKey(address);
  }

  /**
   * The block object {@code ref} is gone: its record goes, unless the record is of a newer object
   * of the same name.
   */
  void gone(BlockRef ref) {
    if (ref.hostPrefix()) {
      AddressKey address = new AddressKey(ref.pool(), ref.cidr().network());
      SubClaim known = subClaims.get(address);
      if (known != null && (known.uid() == null || known.uid().equals(ref.uid()))) {
        subClaims.remove(address);
      }
    }
    Map<Cidr, Slot> ofPool = slots.get(ref.pool());
    if (ofPool != null) {
      Slot known = ofPool.get(ref.cidr());
      if (known != null && Objects.equals(known.uid(), ref.uid())) {
        ofPool.remove(ref.cidr());
      }
    }
  }

  /** The slots of {@code pool} that are Shared and not being deleted, at the pool's block size. */
  List<Slot> usable(String pool, int blockSize) {
    List<Slot> usable = new ArrayList<>();
    for (Slot slot : slots.getOrDefault(pool, Map.of()).values()) {
      if (slot.usable() && slot.cidr().prefixLength() == blockSize) {
        usable.add(slot);
      }
    }
    return usable;
  }

  /**
   * A fresh read found {@code slot} gone, being deleted or not Shared: no address of it is
   * sub-claimed again until the watch shows it otherwise.
   */
  void unusable(String pool, Cidr slot) {
    Map<Cidr, Slot> ofPool = slots.get(pool);
    Slot known = ofPool == null ? null : ofPool.get(slot);
    if (known != null) {
      ofPool.put(slot, new Slot(slot, known.uid(), known.shared(), true));
    }
  }

  /** The slots of {@code pool} this node knows of (a copy). */
  Set<Cidr> slotsOf(String pool) {
    return new HashSet<>(slots.getOrDefault(pool, Map.of()).keySet());
  }

  /** The addresses of {@code pool} this node knows to be sub-claimed (a copy). */
  Set<AddressKey> subClaimsOf(String pool) {
    Set<AddressKey> of = new HashSet<>();
    for (AddressKey address : subClaims.keySet()) {
      if (address.pool().equals(pool)) {
        of.add(address);
      }
    }
    return of;
  }

  /** A fresh listing of the pool no longer shows the slot {@code slot}: it is forgotten. */
  void forgetSlot(String pool, Cidr slot) {
    Map<Cidr, Slot> ofPool = slots.get(pool);
    if (ofPool != null) {
      ofPool.remove(slot);
    }
  }

  /** A fresh listing of the pool no longer shows the sub-claim of {@code address}: forgotten. */
  void forgetSubClaim(AddressKey address) {
    subClaims.remove(address);
  }
}
