package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
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
 * Hands out and takes back this node's addresses. One {@link AddRequest}, resolved once per
 * interface, is served family by family: an attachment that holds an address in a pool of the
 * family gets it back; otherwise the family's intent picks the {@link AddressSource} — dynamic,
 * chosen or claimed — and every source hands its candidate to the one {@link AddressGate}, which
 * checks the invariants and writes the IPAddress. All or nothing: when a later family fails, the
 * addresses this call created are deleted again, and blocks it claimed that stayed empty are given
 * back.
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

  /** A daemon without access to IPAMClaims: an ADD naming one is refused. */
  static final ClaimStore NO_CLAIMS = new NoClaims();

  private final Ledger ledger;
  private final AllocationStore store;
  private final KeyedLocks<Attachment> attachmentLocks = new KeyedLocks<>();
  private final BlockClaims claims;
  private final Settling settling;
  private final DynamicSource dynamic;
  private final ChosenSource chosen;
  private final ClaimedSource claimed;

  /** Without IPAMClaims, settling writes of unknown outcome after {@link #DEFAULT_SETTLE_AFTER}. */
  public Allocator(Ledger ledger, AllocationStore store, Random random) {
    this(ledger, store, NO_CLAIMS, null, random, DEFAULT_SETTLE_AFTER);
  }

  /**
   * @param claimStore where the addresses of IPAMClaims are kept
   * @param blockStatus where the node asks for its own slot to become Shared when a claim needs an
   *     address and no Shared slot has one (null: never)
   * @param settleAfter how long a write of unknown outcome may still land ({@code
   *     KIPAM_SETTLE_SECONDS})
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
        claimStore,
        blockStatus,
        random,
        settleAfter,
        new BlockClaims(ledger, store, random));
  }

  /** With {@code claims} made by the caller, so a test can see the claims in flight. */
  Allocator(
      Ledger ledger,
      AllocationStore store,
      ClaimStore claimStore,
      BlockStatusStore blockStatus,
      Random random,
      Duration settleAfter,
      BlockClaims claims) {
    this.ledger = ledger;
    this.store = store;
    this.claims = claims;
    AddressGate gate = new AddressGate(ledger, store);
    this.dynamic = new DynamicSource(ledger, claims, gate, random);
    this.chosen = new ChosenSource(ledger, store, claims, gate);
    this.claimed =
        new ClaimedSource(
            ledger,
            store,
            claimStore,
            new PersistentAddresses(ledger, store, claimStore, claims, random, blockStatus),
            gate,
            this::release);
    this.settling = new Settling(ledger, store, settleAfter, attachmentLocks, this::release);
  }

  /**
   * Serves {@code request}: one address for each of its families, all or nothing. An attachment
   * that already holds an address in a pool of a family gets the same one back.
   */
  public List<Lease> allocate(AddRequest request) {
    requireSynced();
    return attachmentLocks.with(request.attachment(), () -> allocateAll(request));
  }

  private List<Lease> allocateAll(AddRequest request) {
    List<Lease> result = new ArrayList<>();
    List<Lease> createdHere = new ArrayList<>();
    List<BlockRef> claimedHere = new ArrayList<>();
    try {
      for (AddRequest.Family family : request.families()) {
        Optional<Lease> existing = existing(family, request);
        if (existing.isPresent()) {
          ledger.adopted(existing.get());
          result.add(existing.get());
          continue;
        }
        Lease lease = source(family.intent()).allocate(request, family, claimedHere);
        createdHere.add(lease);
        result.add(lease);
      }
      claimed.served(request, result);
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

  private AddressSource source(AddRequest.Intent intent) {
    if (intent instanceof AddRequest.Chosen) {
      return chosen;
    }
    if (intent instanceof AddRequest.Claimed) {
      return claimed;
    }
    return dynamic;
  }

  /** The attachment's address in a pool of {@code family}, from this node's record or a write. */
  private Optional<Lease> existing(AddRequest.Family family, AddRequest request) {
    for (PoolView pool : family.pools()) {
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
