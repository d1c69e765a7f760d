package io.kipam.node.alloc;

import io.kipam.cni.spec.Attachment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The addresses whose write had an unknown outcome, each kept taken until a fresh read settles it
 * (or an ADD returns it to the runtime). At most one per address: the first uncertain write of an
 * address is the one remembered. Not thread-safe; the {@link Ledger} calls it under its monitor.
 */
final class UncertainWrites {

  private final Map<AddressKey, Uncertain> uncertain = new HashMap<>();

  /**
   * The write of {@code wanted} may have happened ({@code nameTaken}: an object this node has not
   * seen holds its name). Its address stays taken until {@link #settled} or {@link #adopted}.
   */
  void add(Lease wanted, boolean nameTaken, Instant now) {
    uncertain.putIfAbsent(wanted.address(), new Uncertain(wanted, now, nameTaken));
  }

  /**
   * This node's write of an address for {@code attachment} in {@code pool} whose outcome is unknown
   * (an earlier ADD of the attachment whose answer was lost), if any. A write whose name another
   * object holds is not the attachment's.
   */
  Optional<Uncertain> of(String pool, Attachment attachment) {
    for (Uncertain u : uncertain.values()) {
      if (!u.nameTaken()
          && u.wanted().pool().equals(pool)
          && u.wanted().attachment().equals(attachment)) {
        return Optional.of(u);
      }
    }
    return Optional.empty();
  }

  /** The writes uncertain since {@code cutoff} or earlier. */
  List<Uncertain> since(Instant cutoff) {
    List<Uncertain> due = new ArrayList<>();
    for (Uncertain u : uncertain.values()) {
      if (!u.since().isAfter(cutoff)) {
        due.add(u);
      }
    }
    return due;
  }

  /**
   * A fresh read settled {@code u}: true when it was still the uncertain write of its address (and
   * is forgotten now); false when that address was settled already or is uncertain anew. Whatever
   * object holds the address has been recorded by then; with none, the address rests like any
   * released one.
   */
  boolean settled(Uncertain u) {
    return uncertain.remove(u.wanted().address(), u);
  }

  /**
   * An ADD returned {@code lease} as its attachment's address: if its write was uncertain for the
   * same attachment, that is settled now, since the runtime has been told of it.
   */
  void adopted(Lease lease) {
    Uncertain u = uncertain.get(lease.address());
    if (u != null && u.wanted().attachment().equals(lease.attachment())) {
      uncertain.remove(lease.address());
    }
  }

  /** Whether {@code u} is still the uncertain write of its address. */
  boolean is(Uncertain u) {
    return u.equals(uncertain.get(u.wanted().address()));
  }

  boolean contains(AddressKey address) {
    return uncertain.containsKey(address);
  }

  /** The uncertain addresses; a live view. */
  Set<AddressKey> addresses() {
    return uncertain.keySet();
  }

  int size() {
    return uncertain.size();
  }
}
