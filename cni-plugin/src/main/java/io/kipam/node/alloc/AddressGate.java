package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one gate every address source passes before an address is written (design §5c), and the only
 * place that knows the invariants of an ADD's write: the pool is one the request may use (its
 * selectors admitted the pod and the node when the request was resolved) and of the interface's
 * network; the address is one the pool hands out, in the block the lease names (the pool's slot of
 * it, or its host-prefix sub-claim); it does not rest after a release (the reuse delay, for every
 * change of holder, whoever asks); and one holder: the IPAddress is written with a {@code create}
 * only one writer can win, and the ledger records every outcome. A refusal is a {@link Refusal}; an
 * address reserved for the write is given back with it.
 */
final class AddressGate {

  private static final Logger log = LoggerFactory.getLogger(AddressGate.class);

  private final Ledger ledger;
  private final AllocationStore store;

  AddressGate(Ledger ledger, AllocationStore store) {
    this.ledger = ledger;
    this.store = store;
  }

  /**
   * Writes {@code wanted}, an address of {@code pool} for {@code request}: its IPAddress object, or
   * null when an object of that name exists already (409), which leaves the address taken until a
   * fresh read tells by whom.
   */
  Lease write(AddRequest request, PoolView pool, Lease wanted) {
    try {
      admit(request, pool, wanted);
    } catch (Refusal refusal) {
      if (ledger.reserved(wanted.address())) {
        ledger.unreserve(wanted.address());
      }
      throw refusal;
    }
    return create(wanted);
  }

  /** Refuses {@code wanted} unless every invariant of the write holds. */
  void admit(AddRequest request, PoolView pool, Lease wanted) {
    IpAddress ip = wanted.ip();
    PoolView asked = request.pool(pool.name()).orElse(null);
    if (asked == null) {
      throw refused(
          request,
          "pool " + pool.name() + " is not among the pools the attachment may use",
          Refusal.Kind.INVALID_CONFIG);
    }
    if (!pool.network().equals(request.poolNetwork())) {
      throw refused(
          request,
          "pool "
              + pool.name()
              + " belongs to "
              + pool.networkName()
              + ", but the interface's network configuration "
              + request.network()
              + " gives addresses of "
              + PoolView.networkName(request.poolNetwork()),
          Refusal.Kind.INVALID_CONFIG);
    }
    if (!pool.layout().isAssignable(ip)) {
      throw refused(
          request,
          "address " + ip + " is not one pool " + pool.name() + " hands out",
          Refusal.Kind.INVALID_CONFIG);
    }
    Cidr slot = pool.layout().blockOf(ip);
    Cidr host = Cidr.of(ip, ip.family().bits());
    if (!wanted.block().equals(slot) && !wanted.block().equals(host)) {
      throw refused(
          request,
          "address " + ip + " does not lie in block " + wanted.block() + " of pool " + pool.name(),
          Refusal.Kind.INVALID_CONFIG);
    }
    // An IPAMClaim's own address attached again does not change holder: no rest for it.
    String claim = wanted.claim() == null ? null : wanted.pod().namespace() + "/" + wanted.claim();
    Optional<Duration> left = ledger.restLeft(pool, ip, claim);
    if (left.isPresent()) {
      throw resting(pool, ip, left.get(), whose(request));
    }
  }

  /**
   * The refusal of {@code ip}, which rests {@code left} more after its release; {@code whose} names
   * the asking pod and interface.
   */
  static Refusal resting(PoolView pool, IpAddress ip, Duration left, String whose) {
    return new Refusal(
        Refusal.Kind.TRY_AGAIN,
        "address "
            + ip
            + " of pool "
            + pool.name()
            + " was released a moment ago and rests for the pool's reuse delay ("
            + pool.reuseDelay().toSeconds()
            + " s) before another holder gets it: "
            + Math.max(1, left.toSeconds())
            + " s left"
            + whose
            + "; nothing was allocated, try again",
        "the reuse delay keeps a released address from a new pod while caches and connections may"
            + " still point at the old one");
  }

  private static Refusal refused(AddRequest request, String what, Refusal.Kind kind) {
    return new Refusal(kind, what + whose(request) + "; nothing was allocated");
  }

  static String whose(AddRequest request) {
    return " (pod "
        + request.pod().namespace()
        + "/"
        + request.pod().name()
        + ", interface "
        + request.attachment().ifName()
        + ")";
  }

  /** Creates {@code wanted}'s IPAddress, leaving the ledger right whatever the outcome. */
  private Lease create(Lease wanted) {
    try {
      return store.createAddress(wanted);
    } catch (WriteOutcomeUnknownException e) {
      ledger.uncertain(wanted, false);
      log.warn(
          "the create of {} for {}/{} may or may not have happened ({}); the address stays taken"
              + " until a fresh read settles it",
          wanted.ip(),
          wanted.pod().namespace(),
          wanted.pod().name(),
          e.getMessage());
      throw e;
    } catch (StoreUnavailableException | RequestRejectedException e) {
      ledger.unreserve(wanted.address());
      throw e;
    } catch (RuntimeException e) {
      // Nothing says this one did not write: treat it as unknown, never as free.
      ledger.uncertain(wanted, false);
      throw e;
    }
  }
}
