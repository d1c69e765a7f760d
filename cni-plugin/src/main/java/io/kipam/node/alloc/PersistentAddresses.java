package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
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

  PersistentAddresses(
      Ledger ledger,
      AllocationStore store,
      ClaimStore claimStore,
      BlockClaims claims,
      Random random) {
    this.ledger = ledger;
    this.store = store;
    this.claimStore = claimStore;
    this.claims = claims;
    this.random = random;
  }

  /**
   * The claim's address in {@code pool}: the one its sub-claim holds, or a new one. The address is
   * known to the ledger as sub-claimed, so this node never hands it out otherwise.
   */
  IpAddress addressOf(PoolView pool, ClaimStore.Claim claim) {
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
      return live.stream().map(ClaimStore.Claimed::ip).sorted().findFirst().orElseThrow();
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
    return newAddress(pool, claim);
  }

  private IpAddress newAddress(PoolView pool, ClaimStore.Claim claim) {
    int rounds = 0;
    while (rounds++ < Allocator.ATTEMPTS * 4) {
      long knownListing = claims.listingOf(pool);
      Optional<Ledger.Pick> pick = ledger.reserveShared(pool, random);
      if (pick.isEmpty()) {
        BlockClaims.Claim slot = claims.claim(pool, new ArrayList<>(), true);
        if (slot == BlockClaims.Claim.NONE && !claims.relist(pool, knownListing)) {
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
