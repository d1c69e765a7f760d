package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
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
 * create the parent is read afresh, as for every sub-claim: a slot being deleted gets it back.
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
   * The claim's address in {@code pool}: the one its sub-claim holds, or a new one. The address is
   * known to the ledger as sub-claimed, so this node never hands it out otherwise.
   */
  IpAddress addressOf(PoolView pool, ClaimStore.Claim claim, Optional<IpAddress> chosen) {
    List<ClaimStore.Claimed> held = claimStore.claimedIn(pool.name(), claim.uid());
    for (ClaimStore.Claimed c : held) {
      ledger.blocks().subClaimSeen(pool.name(), host(c.ip()), c.uid(), null);
    }
    List<ClaimStore.Claimed> live = held.stream().filter(c -> !c.deleting()).toList();
    if (live.size() > 1) {
      log.warn(
          "{} holds {} addresses of pool {}: {}; attaching the lowest",
          claim.what(),
          live.size(),
          pool.name(),
          live.stream().map(ClaimStore.Claimed::ip).toList());
    }
    if (!live.isEmpty()) {
      IpAddress theClaims =
          live.stream().map(ClaimStore.Claimed::ip).sorted().findFirst().orElseThrow();
      if (chosen.isPresent() && !chosen.get().equals(theClaims)) {
        throw new ClaimException(
            ClaimException.Kind.INVALID,
            claim.what()
                + " holds address "
                + theClaims
                + " of pool "
                + pool.name()
                + ", but the pod asks for "
                + chosen.get()
                + ": a claim keeps the address it has (delete the claim for another)");
      }
      return theClaims;
    }
    if (!held.isEmpty()) {
      throw new ClaimException(
          ClaimException.Kind.TRY_AGAIN,
          "the address of "
              + claim.what()
              + " in pool "
              + pool.name()
              + " is being given back (the claim was deleted); try again");
    }
    return chosen.isPresent() ? chosenAddress(pool, claim, chosen.get()) : newAddress(pool, claim);
  }

  /**
   * The chosen address {@code ip} as the claim's (a virtual machine with a fixed address): its
   * sub-claim under the address's slot, which must be Shared. An unclaimed slot is claimed Shared
   * from birth; this node's own Exclusive slot is asked to become Shared; another node's is asked
   * for through the node's demand (the refusal carries the slot). "Try again" meanwhile.
   */
  private IpAddress chosenAddress(PoolView pool, ClaimStore.Claim claim, IpAddress ip) {
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
        "{} holds the chosen address {} of pool {} from now on", claim.what(), ip, pool.name());
    return ip;
  }

  private IpAddress newAddress(PoolView pool, ClaimStore.Claim claim) {
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
          "{} holds {} of Shared slot {} of pool {} from now on",
          claim.what(),
          ip,
          slot,
          pool.name());
      return ip;
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
