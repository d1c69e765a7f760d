package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The address of an IPAMClaim in a pool (design §5b): a sub-claim under a Shared slot, held by the
 * claim rather than by a node, so it can follow the claim's pods from node to node. The claim's
 * sub-claims are found by its UID (label {@code kipam.io/claim}), so an ADD that died between its
 * writes finds the address it made. A new one is taken from a Shared slot with a free address, or
 * from a slot this call claims Shared from birth; never from a node's Exclusive block. After the
 * create the parent is read afresh, as for every sub-claim: a slot being deleted gets it back. Then
 * the address is bound to the claim: written to its {@code status.ips} with the resourceVersion
 * read before the create as precondition, so of two first ADDs on two nodes only one binds, and a
 * claim has one address per pool. An address is answered only when the status binds it, a live
 * sub-claim of the claim holds it, and its slot and pool check out.
 *
 * <p>Which pod has the address at a time is the IPAddress in the claim's namespace, whose name is
 * derived from pool and address: a second attachment while the first lasts collides with it (409),
 * so one address is never attached twice.
 */
final class PersistentAddresses {

  private static final Logger log = LoggerFactory.getLogger(PersistentAddresses.class);

  private final Ledger ledger;
  private final AllocationStore store;
  private final ClaimStore claimStore;
  private final BlockClaims claims;
  private final Random random;
  private final BlockStatusStore blockStatus;
  private final Map<BlockRef, Instant> shareAsked = new ConcurrentHashMap<>();

  /** How long a slot this node asked to make Shared is not asked for again. */
  static final Duration ASK_AGAIN_AFTER = Duration.ofSeconds(30);

  /**
   * @param blockStatus where this node asks for its own slot to become Shared (null: never)
   */
  PersistentAddresses(
      Ledger ledger,
      AllocationStore store,
      ClaimStore claimStore,
      BlockClaims claims,
      Random random,
      BlockStatusStore blockStatus) {
    this.ledger = ledger;
    this.store = store;
    this.claimStore = claimStore;
    this.claims = claims;
    this.random = random;
    this.blockStatus = blockStatus;
  }

  /**
   * The claim's address in {@code pool}: the one its status binds and a live sub-claim of the claim
   * holds, after checking that it is an address the daemon may vouch for; or a new one, bound to
   * the claim before it is answered. The address is known to the ledger as sub-claimed, so this
   * node never hands it out otherwise.
   *
   * <p>Binding is what makes one address per claim and pool: a new sub-claim is bound by writing
   * the claim's {@code status.ips} with the resourceVersion read before it as precondition, so of
   * two nodes attaching the claim first, one write wins; the other reads again, gives its own
   * sub-claim back and answers the bound address. A sub-claim of the claim that the status does not
   * name is never attached. A claim without a bound address in the pool adopts the lowest live
   * sub-claim it has (left by an ADD that died between create and bind) before it makes another.
   */
  IpAddress addressOf(PoolView pool, ClaimStore.Claim claim, Optional<IpAddress> chosen) {
    List<ClaimStore.Claimed> madeHere = new ArrayList<>();
    for (int round = 0; round < BIND_ROUNDS; round++) {
      ClaimStore.Claim fresh = readFresh(claim);
      List<ClaimStore.Claimed> held = claimStore.claimedIn(pool.name(), claim.uid());
      for (ClaimStore.Claimed c : held) {
        ledger.blocks().subClaimSeen(pool.name(), host(c.ip()), c.uid(), null);
      }
      Optional<IpAddress> bound = boundIn(pool, fresh, held);
      if (bound.isPresent()) {
        ClaimStore.Claimed theClaims = boundSubClaim(pool, fresh, bound.get(), held);
        verify(pool, fresh, theClaims, chosen);
        giveBack(pool, fresh, madeHere, theClaims);
        return theClaims.ip();
      }
      List<ClaimStore.Claimed> live =
          held.stream()
              .filter(c -> !c.deleting())
              .sorted(Comparator.comparing(ClaimStore.Claimed::ip))
              .toList();
      if (live.isEmpty() && !held.isEmpty()) {
        throw new ClaimException(
            ClaimException.Kind.TRY_AGAIN,
            "the address of "
                + claim.what()
                + " in pool "
                + pool.name()
                + " is being given back (the claim was deleted); try again");
      }
      ClaimStore.Claimed candidate;
      if (!live.isEmpty()) {
        // Made by an ADD that has not bound it (yet, or ever): of two binds, one wins.
        candidate = live.get(0);
        verify(pool, fresh, candidate, chosen);
      } else {
        candidate =
            chosen.isPresent() ? chosenAddress(pool, fresh, chosen.get()) : newAddress(pool, fresh);
        madeHere.add(candidate);
      }
      Optional<ClaimStore.Claim> written =
          claimStore.bindAddresses(fresh, withAddress(fresh.ips(), pool, candidate.ip()));
      if (written.isPresent()) {
        log.info(
            "{} has address {} of pool {} from now on (bound in its status)",
            claim.what(),
            candidate.ip(),
            pool.name());
        giveBack(pool, fresh, madeHere, candidate);
        return candidate.ip();
      }
      log.info(
          "{} changed while address {} of pool {} was bound to it; reading it again",
          claim.what(),
          candidate.ip(),
          pool.name());
    }
    throw new ClaimException(
        ClaimException.Kind.TRY_AGAIN,
        "the address of "
            + claim.what()
            + " in pool "
            + pool.name()
            + " could not be bound: the claim kept changing; try again");
  }

  /** How often an ADD reads the claim again after losing a bind. */
  static final int BIND_ROUNDS = 5;

  private ClaimStore.Claim readFresh(ClaimStore.Claim claim) {
    return claimStore
        .readClaim(claim.namespace(), claim.name())
        .filter(c -> claim.uid().equals(c.uid()))
        .orElseThrow(
            () ->
                new ClaimException(
                    ClaimException.Kind.TRY_AGAIN,
                    claim.what() + " was deleted or made again meanwhile; try again"));
  }

  /**
   * The address of {@code pool} the claim's status binds: among its {@code status.ips} those in the
   * pool's CIDR (where two pools' CIDRs overlap, those the pool's sub-claims of the claim hold).
   */
  private static Optional<IpAddress> boundIn(
      PoolView pool, ClaimStore.Claim claim, List<ClaimStore.Claimed> held) {
    List<IpAddress> named =
        claim.ips().stream()
            .map(PersistentAddresses::addressIn)
            .flatMap(Optional::stream)
            .filter(ip -> inCidr(pool, ip))
            .distinct()
            .toList();
    if (named.size() > 1) {
      named = named.stream().filter(ip -> held.stream().anyMatch(c -> c.ip().equals(ip))).toList();
    }
    if (named.size() > 1) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          claim.what()
              + " names "
              + named.size()
              + " addresses of pool "
              + pool.name()
              + " in its status ("
              + named
              + "); a claim has one address per pool; not attached");
    }
    return named.stream().findFirst();
  }

  private static Optional<IpAddress> addressIn(String statusIp) {
    try {
      int slash = statusIp.indexOf('/');
      return Optional.of(
          IpAddress.parseLenient(slash < 0 ? statusIp : statusIp.substring(0, slash)));
    } catch (RuntimeException unreadable) {
      return Optional.empty();
    }
  }

  private static boolean inCidr(PoolView pool, IpAddress ip) {
    Cidr cidr = pool.layout().cidr();
    return ip.family() == cidr.network().family() && cidr.contains(ip);
  }

  /** The status's {@code ips} with {@code ip} as the pool's address (CIDR notation). */
  private static List<String> withAddress(List<String> ips, PoolView pool, IpAddress ip) {
    List<String> written = new ArrayList<>();
    for (String other : ips) {
      if (addressIn(other).filter(a -> inCidr(pool, a)).isEmpty()) {
        written.add(other);
      }
    }
    written.add(ip + "/" + pool.layout().cidr().prefixLength());
    return written;
  }

  /** The live sub-claim of the claim that holds the address its status binds. */
  private static ClaimStore.Claimed boundSubClaim(
      PoolView pool, ClaimStore.Claim claim, IpAddress bound, List<ClaimStore.Claimed> held) {
    List<ClaimStore.Claimed> holding = held.stream().filter(c -> c.ip().equals(bound)).toList();
    if (holding.isEmpty()) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          claim.what()
              + " binds address "
              + bound
              + " of pool "
              + pool.name()
              + " in its status, but no sub-claim of the claim holds it"
              + (held.isEmpty()
                  ? ""
                  : " (its sub-claims hold "
                      + held.stream().map(ClaimStore.Claimed::ip).toList()
                      + ")")
              + "; not attached");
    }
    return holding.stream()
        .filter(c -> !c.deleting())
        .findFirst()
        .orElseThrow(
            () ->
                new ClaimException(
                    ClaimException.Kind.TRY_AGAIN,
                    "address "
                        + bound
                        + " of "
                        + claim.what()
                        + " in pool "
                        + pool.name()
                        + " is being given back (the claim was deleted); try again"));
  }

  /**
   * Checks a claim's address before it is bound or answered (design §7: the daemon does not attach
   * an address an object it did not write names unless slot and pool check out): assignable in the
   * pool, its sub-claim's parent the slot the address lies in, and that slot Shared and not being
   * deleted by a fresh read. A forged sub-claim under an Exclusive slot would otherwise give one
   * address to the claim and to a pod of the slot's holder.
   */
  private void verify(
      PoolView pool, ClaimStore.Claim claim, ClaimStore.Claimed c, Optional<IpAddress> chosen) {
    IpAddress ip = c.ip();
    String what = "address " + ip + " of " + claim.what() + " (pool " + pool.name() + ")";
    if (!inCidr(pool, ip) || !pool.layout().isAssignable(ip)) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          what + " is not one pool " + pool.name() + " hands out; not attached");
    }
    Cidr slot = pool.layout().blockOf(ip);
    if (!slot.equals(c.slot())) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          what
              + " lies in slot "
              + slot
              + ", but its sub-claim names "
              + (c.slot() == null ? "no slot" : "slot " + c.slot())
              + " as parent; not attached");
    }
    Optional<AllocationStore.SlotState> state = store.readSlot(pool.name(), slot);
    if (state.isEmpty()) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          what + " lies in slot " + slot + ", which does not exist; not attached");
    }
    if (state.get().deleting()) {
      throw new ClaimException(
          ClaimException.Kind.TRY_AGAIN,
          what + " lies in slot " + slot + ", which is being given back; try again");
    }
    if (!state.get().shared()) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          what
              + " lies in slot "
              + slot
              + ", which is held Exclusive by a node: a claim's address lies in a Shared slot;"
              + " not attached");
    }
    if (chosen.isPresent() && !chosen.get().equals(ip)) {
      throw new ClaimException(
          ClaimException.Kind.INVALID,
          claim.what()
              + " holds address "
              + ip
              + " of pool "
              + pool.name()
              + ", but the pod asks for "
              + chosen.get()
              + ": a claim keeps the address it has (delete the claim for another)");
    }
  }

  /**
   * Gives back the sub-claims this call made that lost to {@code kept}: the claim binds another
   * address, so none of them is ever attached. One that cannot be given back now stays until the
   * claim is deleted (kipam-operator gives back every sub-claim of a deleted claim).
   */
  private void giveBack(
      PoolView pool,
      ClaimStore.Claim claim,
      List<ClaimStore.Claimed> madeHere,
      ClaimStore.Claimed kept) {
    for (ClaimStore.Claimed c : madeHere) {
      if (c.ip().equals(kept.ip())) {
        continue;
      }
      try {
        claimStore.releaseClaimed(pool.name(), c.ip(), c.uid());
        log.info(
            "gave back address {} of pool {}: {} has {}",
            c.ip(),
            pool.name(),
            claim.what(),
            kept.ip());
      } catch (RuntimeException e) {
        log.warn(
            "could not give back address {} of pool {} that {} does not use (it stays until the"
                + " claim is deleted): {}",
            c.ip(),
            pool.name(),
            claim.what(),
            e.toString());
      }
    }
  }

  /**
   * The chosen address {@code ip} as the claim's (a virtual machine with a fixed address): its
   * sub-claim under the address's slot, which must be Shared. An unclaimed slot is claimed Shared
   * from birth; this node's own Exclusive slot is asked to become Shared; another node's is asked
   * for through the node's demand (the refusal carries the slot). "Try again" meanwhile.
   */
  private ClaimStore.Claimed chosenAddress(PoolView pool, ClaimStore.Claim claim, IpAddress ip) {
    if (!pool.layout().isAssignable(ip)) {
      throw new StaticAddressException(
          StaticAddressException.Kind.INVALID,
          pool.name(),
          "address " + ip + " is not one pool " + pool.name() + " hands out");
    }
    Cidr slot = pool.layout().blockOf(ip);
    Optional<AllocationStore.SlotState> state = claims.slotOfChosen(pool, slot);
    if (state.isEmpty() || state.get().deleting()) {
      throw new ClaimException(
          ClaimException.Kind.TRY_AGAIN,
          "the slot " + slot + " of " + ip + " is being given back; try again");
    }
    if (!state.get().shared()) {
      Optional<BlockObject> own =
          ledger.blocks().ownBlocks(pool.name()).contains(slot)
              ? ledger.blocks().ownSlot(pool.name(), slot)
              : Optional.empty();
      if (own.isPresent() && blockStatus != null && !own.get().closed()) {
        blockStatus.requestShare(
            own.get().ref(),
            ledger.now().truncatedTo(ChronoUnit.MILLIS).toString(),
            claim.what() + " asks for address " + ip + " of it");
      }
      throw new StaticAddressException(
          StaticAddressException.Kind.TRY_AGAIN,
          pool.name(),
          own.isPresent() ? null : slot.toString(),
          "address "
              + ip
              + " for "
              + claim.what()
              + " lies in slot "
              + slot
              + ", held Exclusive by "
              + (own.isPresent() ? "this node, which makes it Shared" : "another node")
              + "; a claim's address lies in a Shared slot; try again");
    }
    String uid = claimStore.createClaimed(pool.name(), ip, slot, claim);
    if (uid == null) {
      ledger.blocks().subClaimTaken(pool.name(), ip);
      throw new StaticAddressException(
          StaticAddressException.Kind.HELD,
          pool.name(),
          "address "
              + ip
              + " of pool "
              + pool.name()
              + " is held by "
              + store
                  .findAddress(pool.name(), ip)
                  .map(
                      h ->
                          "pod "
                              + h.pod().namespace()
                              + "/"
                              + h.pod().name()
                              + " on node "
                              + h.node())
                  .orElse("another claim or node"));
    }
    ledger.blocks().subClaimSeen(pool.name(), host(ip), uid, null);
    Optional<AllocationStore.SlotState> parent = store.readSlot(pool.name(), slot);
    if (parent.isEmpty() || parent.get().deleting() || !parent.get().shared()) {
      claimStore.releaseClaimed(pool.name(), ip, uid);
      throw new ClaimException(
          ClaimException.Kind.TRY_AGAIN,
          "the slot " + slot + " of " + ip + " is being given back; try again");
    }
    log.info(
        "{} holds the chosen address {} of pool {} (not bound yet)", claim.what(), ip, pool.name());
    return new ClaimStore.Claimed(ip, uid, slot, claim.uid(), false);
  }

  private ClaimStore.Claimed newAddress(PoolView pool, ClaimStore.Claim claim) {
    int rounds = 0;
    while (rounds++ < Allocator.ATTEMPTS * 4) {
      long knownListing = claims.listingOf(pool);
      Optional<Ledger.Pick> pick = ledger.reserveShared(pool, random);
      if (pick.isEmpty()) {
        BlockClaims.Claim slot = claims.claim(pool, new ArrayList<>(), true);
        if (slot == BlockClaims.Claim.NONE && !claims.relist(pool, knownListing)) {
          shareOwnSlot(pool, claim);
          throw NoAddress.refusal(
              pool,
              ledger.node(),
              ledger.blocks().ownBlocks(pool.name()).size(),
              "an IPAMClaim's address is taken from a Shared slot, and no Shared slot has a free"
                  + " address nor is any slot unclaimed");
        }
        continue;
      }
      IpAddress ip = pick.get().ip();
      Cidr slot = pick.get().block();
      AddressKey address = new AddressKey(pool.name(), ip);
      String uid;
      try {
        uid = claimStore.createClaimed(pool.name(), ip, slot, claim);
      } catch (RuntimeException e) {
        // If it happened, the next ADD of the claim finds it by the claim's UID.
        ledger.unreserve(address);
        ledger.blocks().subClaimTaken(pool.name(), ip);
        throw e;
      }
      ledger.unreserve(address);
      if (uid == null) {
        ledger.blocks().subClaimTaken(pool.name(), ip);
        continue;
      }
      ledger.blocks().subClaimSeen(pool.name(), host(ip), uid, null);
      Optional<AllocationStore.SlotState> parent = store.readSlot(pool.name(), slot);
      if (parent.isEmpty() || parent.get().deleting() || !parent.get().shared()) {
        ledger.blocks().slotUnusable(pool.name(), slot);
        claimStore.releaseClaimed(pool.name(), ip, uid);
        continue;
      }
      log.info(
          "{} holds {} of Shared slot {} of pool {} (not bound yet)",
          claim.what(),
          ip,
          slot,
          pool.name());
      return new ClaimStore.Claimed(ip, uid, slot, claim.uid(), false);
    }
    throw NoAddress.refusal(
        pool,
        ledger.node(),
        ledger.blocks().ownBlocks(pool.name()).size(),
        "no Shared slot's address could be claimed for " + claim.what());
  }

  /**
   * Every slot of the pool is claimed and no Shared one has a free address: when this node holds an
   * open slot with free addresses, it asks for that slot to become Shared, as kipam-operator would
   * for another node (kipam-operator does not for the node that holds the slot, since that node is
   * not short of addresses of its own). Its converter makes it Shared; the ADD is answered "try
   * again" meanwhile. When this node holds none, the refusal records the node's demand and
   * kipam-operator converts another node's slot.
   */
  private void shareOwnSlot(PoolView pool, ClaimStore.Claim claim) {
    if (blockStatus == null) {
      return;
    }
    Optional<BlockObject> slot = ledger.blocks().slotToShare(pool);
    if (slot.isEmpty()) {
      return;
    }
    BlockRef ref = slot.get().ref();
    Instant now = ledger.now();
    Instant asked = shareAsked.get(ref);
    if (asked == null || asked.plus(ASK_AGAIN_AFTER).isBefore(now)) {
      String reason =
          "an address of "
              + claim.what()
              + " must be reachable from every node, and pool "
              + pool.name()
              + " has no unclaimed slot and no Shared slot with a free address";
      if (!blockStatus.requestShare(ref, now.truncatedTo(ChronoUnit.MILLIS).toString(), reason)) {
        return;
      }
      shareAsked.put(ref, now);
      shareAsked.values().removeIf(at -> at.plus(ASK_AGAIN_AFTER).isBefore(now));
      log.info(
          "asked for this node's slot {} of pool {} to become Shared: {}",
          ref.cidr(),
          pool.name(),
          reason);
    }
    throw new ClaimException(
        ClaimException.Kind.TRY_AGAIN,
        "pool "
            + pool.name()
            + " has no unclaimed slot and no Shared slot with a free address: node "
            + ledger.node()
            + " makes its slot "
            + ref.cidr()
            + " Shared for "
            + claim.what()
            + "; try again");
  }

  /**
   * After the IPAddress of {@code ip} was written for the claim: the sub-claim is read afresh and
   * must still be the claim's and not being deleted (the other half of kipam-operator's check
   * before it gives a deleted claim's address back).
   */
  boolean stillHeld(String pool, IpAddress ip, ClaimStore.Claim claim) {
    return claimStore
        .readClaimed(pool, ip)
        .map(c -> !c.deleting() && claim.uid().equals(c.claimUid()))
        .orElse(false);
  }

  static Cidr host(IpAddress ip) {
    return Cidr.of(ip, ip.family().bits());
  }
}
