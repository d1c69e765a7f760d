package io.kipam.node.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Any free address of a family's pools, the first pool first: a pool that is exhausted (or whose
 * {@code maxBlocksPerNode} allows this node no more) passes the request to the next; any other
 * refusal ends it, and so does "short" (free addresses this node cannot reach yet), which
 * kipam-operator resolves. In a pool, an address is picked from this node's open blocks and
 * reserved in the {@link Ledger}; when they are full a new block is claimed (one claim per pool in
 * flight on this node), else a Shared slot's address is sub-claimed; only when what the node knows
 * of other nodes' blocks leaves it without an address is the pool listed afresh and tried again
 * ({@link BlockClaims#relist}).
 */
final class DynamicSource implements AddressSource {

  private static final Logger log = LoggerFactory.getLogger(DynamicSource.class);

  /** How many addresses or blocks one request tries itself before it gives up on a pool. */
  static final int ATTEMPTS = Allocator.ATTEMPTS;

  private final Ledger ledger;
  private final BlockClaims claims;
  private final AddressGate gate;
  private final Random random;

  DynamicSource(Ledger ledger, BlockClaims claims, AddressGate gate, Random random) {
    this.ledger = ledger;
    this.claims = claims;
    this.gate = gate;
    this.random = random;
  }

  @Override
  public Lease allocate(AddRequest request, AddRequest.Family family, List<BlockRef> claimedHere) {
    return firstServing(family.pools(), request, pool -> allocateIn(pool, request, claimedHere));
  }

  /**
   * The address of the first of {@code pools} that has one for {@code request}: a pool that is
   * exhausted (or whose {@code maxBlocksPerNode} allows this node no more) passes the request to
   * the next; any other refusal ends it.
   */
  static Lease firstServing(
      List<PoolView> pools, AddRequest request, Function<PoolView, Lease> serve) {
    List<String> exhausted = new ArrayList<>();
    for (int i = 0; ; i++) {
      PoolView pool = pools.get(i);
      try {
        return serve.apply(pool);
      } catch (AllocationException e) {
        boolean exhaustedHere =
            e.reason() == AllocationException.Reason.POOL_EXHAUSTED
                || e.reason() == AllocationException.Reason.BLOCK_LIMIT;
        if (!exhaustedHere || pools.size() == 1) {
          throw e;
        }
        exhausted.add(e.getMessage());
        if (i == pools.size() - 1) {
          throw new AllocationException(
              e.reason(),
              pools.get(0).name(),
              "every pool the attachment may use of this family is exhausted: "
                  + String.join("; ", exhausted));
        }
        log.info(
            "pool {} has no address for {}/{}; trying pool {}",
            pool.name(),
            request.pod().namespace(),
            request.pod().name(),
            pools.get(i + 1).name());
      }
    }
  }

  private Lease allocateIn(PoolView pool, AddRequest request, List<BlockRef> claimedHere) {
    int ownAttempts = 0;
    // Waiting on another ADD's claim is not an attempt of this one, but is bounded all the same.
    for (int round = 0; ownAttempts < ATTEMPTS && round < ATTEMPTS * 8; round++) {
      Optional<Ledger.Pick> pick = ledger.reserveFree(pool, random);
      if (pick.isEmpty()) {
        long knownListing = claims.listingOf(pool);
        BlockClaims.Claim claim =
            claims.exclusive(pool)
                ? claims.claim(pool, claimedHere, false)
                : BlockClaims.Claim.NONE;
        if (claim == BlockClaims.Claim.NONE) {
          pick = claims.subClaim(pool, claimedHere);
        }
        if (pick.isEmpty() && claim == BlockClaims.Claim.NONE && pool.nodes() != null) {
          claim = claims.claim(pool, claimedHere, true);
        }
        if (pick.isEmpty()) {
          if (claim == BlockClaims.Claim.NONE) {
            if (claims.relist(pool, knownListing)) {
              continue; // what other nodes hold was known less well than now: try again
            }
            throw exhausted(
                pool, "no unclaimed block is left, and no Shared slot has a free address");
          }
          ownAttempts += claim == BlockClaims.Claim.CLAIMED ? 1 : 0;
          continue;
        }
      }
      ownAttempts++;
      Lease wanted = request.unwritten(pool, pick.get().ip(), pick.get().block(), ledger.node());
      Lease created = gate.write(request, pool, wanted);
      if (created == null) {
        // Someone holds this name in that namespace already, which this node has not seen: the
        // address stays taken until a fresh read tells by whom; try another.
        ledger.uncertain(wanted, true);
        log.info(
            "address {} of pool {} is taken in namespace {} by an object this node has not seen;"
                + " trying another",
            wanted.ip(),
            pool.name(),
            wanted.pod().namespace());
        continue;
      }
      ledger.commit(created);
      log.info(
          "allocated {} from pool {} to {}/{} ({} {}, network {})",
          created.ip(),
          pool.name(),
          request.pod().namespace(),
          request.pod().name(),
          request.attachment().containerId(),
          request.attachment().ifName(),
          request.network());
      return created;
    }
    throw exhausted(pool, "no free address after " + ATTEMPTS + " attempts");
  }

  private AllocationException exhausted(PoolView pool, String why) {
    return NoAddress.refusal(
        pool, ledger.node(), ledger.blocks().ownBlocks(pool.name()).size(), why);
  }
}
