package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A chosen address (design §5b, static addresses), from the first pool of its family that holds it:
 * given, like every address, only by the node that holds it. In an open slot of this node it is
 * reserved and written at once. Otherwise it is taken as a sub-claim of this node: its slot claimed
 * Shared from birth when nobody holds it, or sub-claimed in a slot that is Shared already (the
 * parent read afresh after the sub-claim, as for every sub-claim). In another node's Exclusive slot
 * it cannot be taken until that slot is Shared: unless an IPAddress holds it already, the ADD is
 * answered "try again" and the node's demand for the slot recorded. An address another attachment
 * holds is refused, naming its namespace and pod; one that rests after its release is "try again".
 */
final class ChosenSource implements AddressSource {

  private static final Logger log = LoggerFactory.getLogger(ChosenSource.class);

  private final Ledger ledger;
  private final AllocationStore store;
  private final BlockClaims claims;
  private final AddressGate gate;

  ChosenSource(Ledger ledger, AllocationStore store, BlockClaims claims, AddressGate gate) {
    this.ledger = ledger;
    this.store = store;
    this.claims = claims;
    this.gate = gate;
  }

  @Override
  public Lease allocate(AddRequest request, AddRequest.Family family, List<BlockRef> claimedHere) {
    IpAddress ip = ((AddRequest.Chosen) family.intent()).ip();
    PoolView pool = poolOf(request, family, ip);
    if (!pool.layout().isAssignable(ip)) {
      throw new StaticAddressException(
          StaticAddressException.Kind.INVALID,
          pool.name(),
          "address "
              + ip
              + " is not one pool "
              + pool.name()
              + " hands out (outside its range, excluded, or its gateway, network or broadcast"
              + " address)");
    }
    Cidr host = Cidr.of(ip, ip.family().bits());
    Cidr block;
    Ledger.Exact reserved = ledger.reserveExact(pool, ip, null);
    if (reserved == Ledger.Exact.RESERVED) {
      block = pool.layout().blockOf(ip);
    } else if (reserved == Ledger.Exact.TAKEN) {
      throw held(pool, ip);
    } else if (reserved == Ledger.Exact.RESTING) {
      throw resting(request, pool, ip);
    } else {
      subClaim(pool, ip, claimedHere);
      Ledger.Exact own = ledger.reserveExact(pool, ip, host);
      if (own == Ledger.Exact.RESTING) {
        throw resting(request, pool, ip);
      }
      if (own != Ledger.Exact.RESERVED) {
        throw held(pool, ip);
      }
      block = host;
    }
    Lease wanted = request.unwritten(pool, ip, block, ledger.node());
    Lease created = gate.write(request, pool, wanted);
    if (created == null) {
      ledger.uncertain(wanted, true);
      throw held(pool, ip);
    }
    ledger.commit(created);
    log.info(
        "allocated the chosen address {} of pool {} to {}/{}",
        ip,
        pool.name(),
        wanted.pod().namespace(),
        wanted.pod().name());
    return created;
  }

  /** The first pool of {@code family} that holds {@code ip}. */
  static PoolView poolOf(AddRequest request, AddRequest.Family family, IpAddress ip) {
    return family
        .poolOf(ip)
        .orElseThrow(
            () ->
                new StaticAddressException(
                    StaticAddressException.Kind.INVALID,
                    null,
                    "address "
                        + ip
                        + " lies in no pool pod "
                        + request.pod().namespace()
                        + "/"
                        + request.pod().name()
                        + " may use on "
                        + PoolView.networkName(request.poolNetwork())
                        + " ("
                        + String.join(", ", family.pools().stream().map(PoolView::name).toList())
                        + ")"));
  }

  /** Takes {@code ip} as this node's sub-claim, claiming its slot Shared first when unclaimed. */
  private void subClaim(PoolView pool, IpAddress ip, List<BlockRef> claimedHere) {
    Cidr slot = pool.layout().blockOf(ip);
    Optional<AllocationStore.SlotState> state = claims.slotOfChosen(pool, slot);
    if (state.isEmpty() || state.get().deleting()) {
      throw tryAgain(pool, ip, "its slot " + slot + " is being given back");
    }
    if (!state.get().shared()) {
      // Only an address nobody holds is worth a conversion: a slot turns Shared for good.
      Optional<Lease> holder = store.findAddress(pool.name(), ip);
      if (holder.isPresent()) {
        throw held(pool, ip, holder);
      }
      throw new StaticAddressException(
          StaticAddressException.Kind.TRY_AGAIN,
          pool.name(),
          slot.toString(),
          "address "
              + ip
              + " of pool "
              + pool.name()
              + " cannot be taken yet: its slot "
              + slot
              + " is held Exclusive by a node; it must become Shared first (this node's demand"
              + " for that slot is recorded, and kipam-operator asks its holder to convert it);"
              + " try again");
    }
    String uid = store.claimSubClaim(pool.name(), ip, ledger.node(), slot);
    if (uid == null) {
      ledger.blocks().subClaimTaken(pool.name(), ip);
      throw held(pool, ip);
    }
    BlockRef ref = new BlockRef(pool.name(), Cidr.of(ip, ip.family().bits()), uid);
    ledger.blocks().blockClaimed(ref);
    claimedHere.add(ref);
    Optional<AllocationStore.SlotState> parent = store.readSlot(pool.name(), slot);
    if (parent.isEmpty() || parent.get().deleting() || !parent.get().shared()) {
      ledger.blocks().slotUnusable(pool.name(), slot);
      throw tryAgain(pool, ip, "its slot " + slot + " is being given back");
    }
  }

  private StaticAddressException held(PoolView pool, IpAddress ip) {
    AddressKey key = new AddressKey(pool.name(), ip);
    return held(pool, ip, ledger.holderOf(key).or(() -> store.findAddress(pool.name(), ip)));
  }

  private static StaticAddressException held(PoolView pool, IpAddress ip, Optional<Lease> holder) {
    String by =
        holder
            .map(h -> "pod " + h.pod().namespace() + "/" + h.pod().name() + " on node " + h.node())
            .orElse("another attachment (being allocated, released or resting)");
    return new StaticAddressException(
        StaticAddressException.Kind.HELD,
        pool.name(),
        "address " + ip + " of pool " + pool.name() + " is held by " + by);
  }

  private Refusal resting(AddRequest request, PoolView pool, IpAddress ip) {
    Duration left = ledger.restLeft(pool, ip).orElse(Duration.ofSeconds(1));
    return AddressGate.resting(pool, ip, left, AddressGate.whose(request));
  }

  private static StaticAddressException tryAgain(PoolView pool, IpAddress ip, String why) {
    return new StaticAddressException(
        StaticAddressException.Kind.TRY_AGAIN,
        pool.name(),
        "address "
            + ip
            + " of pool "
            + pool.name()
            + " cannot be taken yet: "
            + why
            + "; try again");
  }
}
