package io.kipam.node.alloc;

import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The address of an IPAMClaim (design §5b), from {@link PersistentAddresses}: the one the claim
 * holds, or a new one of a Shared slot. Its IPAddress, in the claim's namespace, is this
 * attachment's (owned by the pod, as every attachment) and names the claim. Another attachment's
 * IPAddress of the address (409) means the address is attached elsewhere: one attachment at a time.
 * After the write the claim's sub-claim is read afresh; being given back (its claim deleted), the
 * IPAddress goes again. A claim that holds an address in a pool of the family keeps it, whichever
 * pool that is; one that holds none takes one from the first pool that has one. Once every family
 * is served, the claim's status names the addresses and the pod.
 */
final class ClaimedSource implements AddressSource {

  private static final Logger log = LoggerFactory.getLogger(ClaimedSource.class);

  private final Ledger ledger;
  private final AllocationStore store;
  private final ClaimStore claimStore;
  private final PersistentAddresses persistent;
  private final AddressGate gate;

  /** Releases an IPAddress this source wrote and cannot keep. */
  private final java.util.function.Consumer<Lease> release;

  ClaimedSource(
      Ledger ledger,
      AllocationStore store,
      ClaimStore claimStore,
      PersistentAddresses persistent,
      AddressGate gate,
      java.util.function.Consumer<Lease> release) {
    this.ledger = ledger;
    this.store = store;
    this.claimStore = claimStore;
    this.persistent = persistent;
    this.gate = gate;
    this.release = release;
  }

  @Override
  public Lease allocate(AddRequest request, AddRequest.Family family, List<BlockRef> claimedHere) {
    AddRequest.Claimed intent = (AddRequest.Claimed) family.intent();
    if (intent.chosen().isPresent()) {
      return attach(request, ChosenSource.poolOf(request, family, intent.chosen().get()), intent);
    }
    Optional<PoolView> holding = holding(intent.claim(), family);
    if (holding.isPresent()) {
      return attach(request, holding.get(), intent); // it keeps its address, in whichever pool
    }
    return DynamicSource.firstServing(
        family.pools(), request, pool -> attach(request, pool, intent));
  }

  /** The pool of {@code family} whose address the claim's status names, if any. */
  private static Optional<PoolView> holding(ClaimStore.Claim claim, AddRequest.Family family) {
    for (String cidr : claim.ips()) {
      IpAddress ip;
      try {
        int slash = cidr.indexOf('/');
        ip = IpAddress.parse(slash < 0 ? cidr : cidr.substring(0, slash));
      } catch (IllegalArgumentException unreadable) {
        continue; // not an address kipam wrote; the claim's sub-claims decide
      }
      Optional<PoolView> pool = family.poolOf(ip);
      if (pool.isPresent()) {
        return pool;
      }
    }
    return Optional.empty();
  }

  private Lease attach(AddRequest request, PoolView pool, AddRequest.Claimed intent) {
    ClaimStore.Claim claim = intent.claim();
    for (int attempt = 0; attempt < 3; attempt++) {
      IpAddress ip = persistent.addressOf(pool, claim, intent.chosen());
      Lease wanted = request.unwritten(pool, ip, PersistentAddresses.host(ip), ledger.node());
      Lease created = gate.write(request, pool, wanted);
      if (created == null) {
        Optional<Lease> holder = store.readAddress(wanted);
        if (holder.isEmpty()) {
          continue; // gone meanwhile: try again
        }
        if (!holder.get().writtenFor(request.attachment(), request.pod().uid())) {
          throw new ClaimException(
              ClaimException.Kind.IN_USE,
              "address "
                  + ip
                  + " of "
                  + claim.what()
                  + " is attached to pod "
                  + holder.get().pod().namespace()
                  + "/"
                  + holder.get().pod().name()
                  + " on node "
                  + holder.get().node(),
              holder.get());
        }
        created = holder.get(); // this attachment's own earlier write
      }
      if (!persistent.stillHeld(pool.name(), ip, claim)) {
        release.accept(created);
        throw new ClaimException(
            ClaimException.Kind.TRY_AGAIN,
            claim.what()
                + " is being deleted: its address "
                + ip
                + " is being given back; nothing was allocated");
      }
      ledger.commit(created);
      log.info(
          "attached {} of {} (pool {}) to {}/{} ({} {}, network {})",
          ip,
          claim.what(),
          pool.name(),
          request.pod().namespace(),
          request.pod().name(),
          request.attachment().containerId(),
          request.attachment().ifName(),
          request.network());
      return created;
    }
    throw new ClaimException(
        ClaimException.Kind.TRY_AGAIN,
        "the address of " + claim.what() + " kept changing hands; try again");
  }

  /** Writes the claim's status once every family is served: its addresses, and the pod. */
  void served(AddRequest request, List<Lease> leases) {
    request
        .claim()
        .ifPresent(
            claim ->
                claimStore.writeStatus(
                    claim,
                    leases.stream().map(l -> withPrefix(l, request)).toList(),
                    request.pod().name(),
                    ledger.node()));
  }

  /** The address of {@code lease} with its pool's prefix length, as a claim's status lists it. */
  private static String withPrefix(Lease lease, AddRequest request) {
    int prefix =
        request
            .pool(lease.pool())
            .map(p -> p.layout().cidr().prefixLength())
            .orElse(lease.ip().family().bits());
    return lease.ip() + "/" + prefix;
  }
}
