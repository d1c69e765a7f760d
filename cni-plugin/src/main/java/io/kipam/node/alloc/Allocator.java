package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import io.kipam.runtime.Checkpoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands out and takes back this node's addresses. An address is picked from the node's own blocks
 * and reserved in the {@link Ledger} under its monitor, then claimed with one {@code create} of its
 * IPAddress outside it. Only a successful write turns the reservation into a lease; a write that
 * certainly failed undoes it; a write that may have happened leaves the address uncertain (taken)
 * until {@link #settle} reads what the API has. On 409 the address is left to whoever holds it and
 * the next attempt picks another. When the node's blocks are full a new block is claimed, at a
 * random candidate, moving on when another node won it; one claim per pool is in flight at a time
 * on this node, so concurrent ADDs never claim two blocks where one would do. Only when what the
 * node knows of other nodes' blocks leaves an ADD without an address is the pool listed afresh and
 * the ADD tried again ({@link BlockClaims#relist}); a pool is refused as exhausted on a listing at
 * most a few seconds old.
 *
 * <p>Blocks go back by being retired in the ledger first (checked empty and closed under its
 * monitor, so no concurrent ADD picks from them), then deleted with their UID as precondition: a
 * block an ADD claimed and failed to use, and in host-prefix mode a block whose address was
 * released, once the address has rested for the pool's reuse delay.
 *
 * <p>Calls for one attachment run one at a time (a runtime may retry an ADD while the first is
 * still running); calls for different attachments never wait for each other.
 */
public final class Allocator {

  private static final Logger log = LoggerFactory.getLogger(Allocator.class);

  /**
   * How long a write of unknown outcome may still land, unless the daemon is told otherwise: three
   * times the client's request timeout.
   */
  public static final Duration DEFAULT_SETTLE_AFTER = Duration.ofSeconds(30);

  /** How many addresses or blocks one request tries itself before it gives up on a pool. */
  static final int ATTEMPTS = 16;

  private final Ledger ledger;
  private final AllocationStore store;
  private final Random random;
  private final Duration settleAfter;
  private final KeyedLocks<Attachment> attachmentLocks = new KeyedLocks<>();
  private final BlockClaims claims;
  private final Settling settling;
  private final ClaimStore claimStore;
  private final PersistentAddresses persistent;
  private final StaticAddresses staticAddresses;

  public Allocator(Ledger ledger, AllocationStore store, Random random) {
    this(ledger, store, random, DEFAULT_SETTLE_AFTER);
  }

  /**
   * @param settleAfter how long a write of unknown outcome may still land ({@code
   *     KIPAM_SETTLE_SECONDS})
   */
  public Allocator(Ledger ledger, AllocationStore store, Random random, Duration settleAfter) {
    this(ledger, store, NO_CLAIMS, null, random, settleAfter);
  }

  /**
   * With {@code claimStore} for the addresses of IPAMClaims, and {@code blockStatus} where the node
   * asks for its own slot to become Shared when a claim needs an address and no Shared slot has
   * one.
   */
  public Allocator(
      Ledger ledger,
      AllocationStore store,
      ClaimStore claimStore,
      BlockStatusStore blockStatus,
      Random random,
      Duration settleAfter) {
    this(
        ledger,
        store,
        random,
        settleAfter,
        new BlockClaims(ledger, store, random),
        claimStore,
        blockStatus);
  }

  /** A daemon without access to IPAMClaims: an ADD naming one is refused. */
  static final ClaimStore NO_CLAIMS = new NoClaims();

  /** With {@code claims} made by the caller, so a test can see the claims in flight. */
  Allocator(
      Ledger ledger,
      AllocationStore store,
      Random random,
      Duration settleAfter,
      BlockClaims claims) {
    this(ledger, store, random, settleAfter, claims, NO_CLAIMS, null);
  }

  private Allocator(
      Ledger ledger,
      AllocationStore store,
      Random random,
      Duration settleAfter,
      BlockClaims claims,
      ClaimStore claimStore,
      BlockStatusStore blockStatus) {
    this.ledger = ledger;
    this.claimStore = claimStore;
    this.persistent =
        new PersistentAddresses(ledger, store, claimStore, claims, random, blockStatus);
    this.staticAddresses = new StaticAddresses(ledger, store, claims);
    this.store = store;
    this.random = random;
    this.settleAfter = settleAfter;
    this.claims = claims;
    this.settling = new Settling(ledger, store, settleAfter, attachmentLocks, this::release);
  }

  /**
   * Allocates one address from each pool for {@code attachment} of {@code network}, all or nothing:
   * when a later pool fails, the addresses this call created in earlier pools are deleted again,
   * and blocks it claimed that stayed empty are given back. An attachment that already holds an
   * address in a pool gets the same one back.
   */
  public List<Lease> allocate(
      List<PoolView> pools, Attachment attachment, PodRef pod, String network, String mac) {
    return allocate(pools.stream().map(List::of).toList(), attachment, pod, network, mac, null);
  }

  /**
   * Allocates one address for each family of {@code families} (each a list of pools in order of
   * preference: when one is exhausted, the next serves) for {@code attachment} of {@code network},
   * all or nothing: when a later family fails, the addresses this call created are deleted again,
   * and blocks it claimed that stayed empty are given back. An attachment that already holds an
   * address in a pool of a family gets the same one back. For the IPAMClaim {@code claim} (when not
   * null) each address is the claim's (design §5b), which the claim keeps when the attachment ends,
   * and the claim's status names the addresses and the pod.
   */
  public List<Lease> allocate(
      List<List<PoolView>> families,
      Attachment attachment,
      PodRef pod,
      String network,
      String mac,
      ClaimStore.Claim claim) {
    return allocate(families, attachment, pod, network, mac, claim, List.of());
  }

  /**
   * As above, with {@code statics}: chosen addresses, at most one per family, each given from the
   * first pool of its family that contains it (design §5b, static addresses).
   */
  public List<Lease> allocate(
      List<List<PoolView>> families,
      Attachment attachment,
      PodRef pod,
      String network,
      String mac,
      ClaimStore.Claim claim,
      List<IpAddress> statics) {
    requireSynced();
    Request request = new Request(attachment, pod, network, mac, claim, List.copyOf(statics));
    return attachmentLocks.with(attachment, () -> allocateAll(families, request));
  }

  /**
   * What one ADD asks for; {@code claim} is null unless the pod names an IPAMClaim, {@code statics}
   * the chosen addresses (at most one per family).
   */
  private record Request(
      Attachment attachment,
      PodRef pod,
      String network,
      String mac,
      ClaimStore.Claim claim,
      List<IpAddress> statics) {}

  private List<Lease> allocateAll(List<List<PoolView>> families, Request request) {
    List<Lease> result = new ArrayList<>();
    List<Lease> createdHere = new ArrayList<>();
    List<BlockRef> claimedHere = new ArrayList<>();
    try {
      for (List<PoolView> family : families) {
        Optional<Lease> existing = existing(family, request);
        if (existing.isPresent()) {
          ledger.adopted(existing.get());
          result.add(existing.get());
          continue;
        }
        Lease lease = allocateInFamily(family, request, claimedHere);
        createdHere.add(lease);
        result.add(lease);
      }
      if (request.claim() != null) {
        claimStore.writeStatus(
            request.claim(),
            result.stream().map(l -> withPrefix(l, families)).toList(),
            request.pod().name(),
            ledger.node());
      }
      return result;
    } catch (RuntimeException e) {
      for (Lease lease : createdHere) {
        try {
          release(lease);
        } catch (RuntimeException undo) {
          e.addSuppressed(undo);
        }
      }
      for (BlockRef block : claimedHere) {
        claims.giveBackIfEmpty(block, e);
      }
      throw e;
    } finally {
      ledger.blocks().claimsSettled(claimedHere);
    }
  }

  /** The attachment's address in a pool of {@code family}, from this node's record or a write. */
  private Optional<Lease> existing(List<PoolView> family, Request request) {
    for (PoolView pool : family) {
      Optional<Lease> existing = ledger.leaseOf(pool.name(), request.attachment());
      if (existing.isEmpty()) {
        existing = settling.earlierAttempt(pool, request.attachment(), request.pod().uid());
      }
      if (existing.isPresent()) {
        return existing;
      }
    }
    return Optional.empty();
  }

  /**
   * An address of the first pool of {@code family} that has one: a pool that is exhausted (or whose
   * {@code maxBlocksPerNode} allows this node no more) passes the request to the next. Any other
   * failure ends the request; so does "short" (free addresses this node cannot reach yet), which
   * kipam-operator resolves.
   */
  private Lease allocateInFamily(
      List<PoolView> family, Request request, List<BlockRef> claimedHere) {
    Optional<IpAddress> chosen =
        request.statics().stream()
            .filter(ip -> ip.family() == family.get(0).layout().family())
            .findFirst();
    if (chosen.isPresent()) {
      PoolView pool =
          family.stream()
              .filter(p -> p.layout().cidr().contains(chosen.get()))
              .findFirst()
              .orElseThrow(
                  () ->
                      new StaticAddressException(
                          StaticAddressException.Kind.INVALID,
                          null,
                          "address "
                              + chosen.get()
                              + " lies in no pool pod "
                              + request.pod().namespace()
                              + "/"
                              + request.pod().name()
                              + " may use ("
                              + String.join(", ", family.stream().map(PoolView::name).toList())
                              + ")"));
      if (request.claim() != null) {
        return attachClaimed(pool, request, chosen);
      }
      return staticAddresses.allocate(
          pool,
          chosen.get(),
          claimedHere,
          wanted -> create(wanted),
          (ip, block) -> leaseFor(pool, ip, block, request));
    }
    List<String> exhausted = new ArrayList<>();
    for (int i = 0; ; i++) {
      PoolView pool = family.get(i);
      try {
        return request.claim() == null
            ? allocateIn(pool, request, claimedHere)
            : attachClaimed(pool, request, Optional.empty());
      } catch (AllocationException e) {
        boolean exhaustedHere =
            e.reason() == AllocationException.Reason.POOL_EXHAUSTED
                || e.reason() == AllocationException.Reason.BLOCK_LIMIT;
        if (!exhaustedHere || family.size() == 1) {
          throw e;
        }
        exhausted.add(e.getMessage());
        if (i == family.size() - 1) {
          throw new AllocationException(
              e.reason(),
              family.get(0).name(),
              "every pool the attachment may use of this family is exhausted: "
                  + String.join("; ", exhausted));
        }
        log.info(
            "pool {} has no address for {}/{}; trying pool {}",
            pool.name(),
            request.pod().namespace(),
            request.pod().name(),
            family.get(i + 1).name());
      }
    }
  }

  private Lease allocateIn(PoolView pool, Request request, List<BlockRef> claimedHere) {
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
      Lease wanted = leaseFor(pool, pick.get().ip(), pick.get().block(), request);
      Lease created = create(wanted);
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

  /**
   * Attaches the address of the request's IPAMClaim in {@code pool}: its IPAddress, in the claim's
   * namespace, is this attachment's (owned by the pod, as every attachment) and names the claim.
   * Another attachment's IPAddress of the address (409) means the address is attached elsewhere:
   * one attachment at a time. After the write the claim's sub-claim is read afresh; being given
   * back (its claim deleted), the IPAddress goes again.
   */
  private Lease attachClaimed(PoolView pool, Request request, Optional<IpAddress> chosen) {
    ClaimStore.Claim claim = request.claim();
    for (int attempt = 0; attempt < 3; attempt++) {
      var ip = persistent.addressOf(pool, claim, chosen);
      Lease wanted = leaseFor(pool, ip, PersistentAddresses.host(ip), request);
      Lease created = create(wanted);
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
        release(created);
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

  /** The address of {@code lease} with its pool's prefix length, as a claim's status lists it. */
  private static String withPrefix(Lease lease, List<List<PoolView>> families) {
    for (List<PoolView> family : families) {
      for (PoolView pool : family) {
        if (pool.name().equals(lease.pool())) {
          return lease.ip() + "/" + pool.layout().cidr().prefixLength();
        }
      }
    }
    return lease.ip() + "/" + lease.ip().family().bits();
  }

  /**
   * The IPAddress of {@code ip} in {@code block} of {@code pool} for the request (naming its claim,
   * if any), not written yet.
   */
  private Lease leaseFor(PoolView pool, IpAddress ip, Cidr block, Request request) {
    return new Lease(
        pool.name(),
        ip,
        block,
        ledger.node(),
        request.network(),
        request.attachment(),
        request.pod(),
        request.mac(),
        null,
        request.claim() == null ? null : request.claim().name());
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

  /**
   * Deletes the blocks this node gives back: host-prefix blocks whose address has gone and rested
   * for the pool's reuse delay, and retired blocks whose delete failed before. Run in the
   * background; a failure is tried again on the next call.
   */
  public void returnBlocks() {
    for (BlockRef ref : ledger.blocks().blocksToDelete()) {
      try {
        Checkpoint.reach("daemon-giving-back", ref.pool());
        claims.deleteBlock(ref, ref.hostPrefix() ? "its address was released" : "it is empty");
      } catch (RuntimeException e) {
        log.info(
            "cannot give back block {} of pool {} yet: {}", ref.cidr(), ref.pool(), e.toString());
      }
    }
  }

  private AllocationException exhausted(PoolView pool, String why) {
    return NoAddress.refusal(
        pool, ledger.node(), ledger.blocks().ownBlocks(pool.name()).size(), why);
  }

  /**
   * Releases what {@code attachment} holds in the given pools: deletes each IPAddress (with its UID
   * as precondition) and lets the address rest. Only leases of the pod named by {@code pod} (when
   * given) are touched: a DEL that carries another pod's identity releases nothing. An attachment
   * holding nothing is a success, and an address since handed to another attachment is never
   * touched.
   */
  public void release(List<String> pools, Attachment attachment, Optional<PodName> pod) {
    attachmentLocks.with(
        attachment,
        () -> {
          for (String pool : pools) {
            Optional<Lease> lease = ledger.leaseOf(pool, attachment);
            if (lease.isEmpty()) {
              continue;
            }
            if (pod.isPresent()
                && !lease.get().pod().sameName(pod.get().namespace(), pod.get().name())) {
              log.warn(
                  "DEL of {} {} names pod {}/{}, but {} of pool {} is held by {}/{}; not released",
                  attachment.containerId(),
                  attachment.ifName(),
                  pod.get().namespace(),
                  pod.get().name(),
                  lease.get().ip(),
                  pool,
                  lease.get().pod().namespace(),
                  lease.get().pod().name());
              continue;
            }
            release(lease.get());
          }
          return null;
        });
  }

  /** A pod by namespace and name, as a DEL names it. */
  public record PodName(String namespace, String name) {}

  private void release(Lease lease) {
    ledger.releasing(lease);
    store.deleteAddress(lease);
    released(lease, "released");
  }

  /**
   * Ends the attachment of {@code lease}, whose IPAddress someone else has deleted (a hand delete,
   * the garbage collector, a namespace being deleted) and whose attachment is now over: removes the
   * finalizer, and the address rests like any released one. Nothing is done when the attachment's
   * record is another object by now (a DEL got there first).
   */
  public void endAttachment(Lease lease) {
    attachmentLocks.with(
        lease.attachment(),
        () -> {
          if (isCurrent(lease)) {
            ledger.releasing(lease);
            store.endAttachment(lease);
            released(lease, "ended the attachment of");
          }
          return null;
        });
  }

  /**
   * Releases {@code lease}, whose pod has finished (phase Succeeded or Failed): a finished pod
   * holds nothing, whether or not its DEL ever comes. Nothing is done when the attachment's record
   * is another object by now.
   */
  public void releaseFinished(Lease lease) {
    attachmentLocks.with(
        lease.attachment(),
        () -> {
          if (isCurrent(lease)) {
            release(lease);
          }
          return null;
        });
  }

  private boolean isCurrent(Lease lease) {
    return ledger
        .leaseOf(lease.pool(), lease.attachment())
        .map(l -> l.object().equals(lease.object()))
        .orElse(false);
  }

  private void released(Lease lease, String what) {
    ledger.released(lease);
    log.info(
        "{} {} of pool {} from {}/{}",
        what,
        lease.ip(),
        lease.pool(),
        lease.pod().namespace(),
        lease.pod().name());
    // In host-prefix mode the block is the allocation: it goes back with its address (once the
    // address has rested), so any node can claim it. So does the sub-claim of an address of a
    // slot this node converted to Shared, whose IPAddress still names the slot as its block.
    ledger
        .blocks()
        .retireIdleHostBlock(lease.pool(), Cidr.of(lease.ip(), lease.ip().family().bits()))
        .ifPresent(
            ref -> {
              try {
                claims.deleteBlock(ref, "its address was released");
              } catch (RuntimeException e) {
                log.info(
                    "cannot give back block {} of pool {} yet: {}",
                    ref.cidr(),
                    ref.pool(),
                    e.toString());
              }
            });
  }

  /**
   * Reads again each object of another node that holds a name this node wanted (see {@link
   * Ledger#foreignSeen}) and last read {@code every} ago; see {@link Settling#recheckForeign}.
   */
  public void recheckForeign(Duration every) {
    settling.recheckForeign(every);
  }

  /** Settles the addresses uncertain for at least {@code after}; see {@link Settling#settle}. */
  public void settle(Duration after) {
    settling.settle(after);
  }

  private void requireSynced() {
    if (!ledger.synced()) {
      throw new AllocationException(
          AllocationException.Reason.NOT_READY,
          "kipam-node on " + ledger.node() + " has not finished reading its allocations yet");
    }
  }
}
