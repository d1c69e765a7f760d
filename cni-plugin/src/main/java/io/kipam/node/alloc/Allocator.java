package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands out and takes back this node's addresses. An address is picked from the node's own blocks
 * and reserved in the {@link Ledger} under its monitor, then claimed with one {@code create} of its
 * IPAddress outside it; only a successful write turns the reservation into a lease, and any failure
 * undoes it. When the node's blocks are full a new block is claimed first, at a random candidate,
 * moving on when another node won it. Claims of one pool are serialised on this node, so two
 * concurrent ADDs never claim two blocks where one would do.
 */
public final class Allocator {

  private static final Logger log = LoggerFactory.getLogger(Allocator.class);

  /** How many addresses or blocks one request tries before it gives up on a pool. */
  static final int ATTEMPTS = 16;

  private final Ledger ledger;
  private final AllocationStore store;
  private final Random random;
  private final Map<String, Object> claimLocks = new ConcurrentHashMap<>();

  /**
   * Calls for one attachment are serialised (a runtime may retry an ADD while the first is still
   * running); calls for different attachments mostly are not. Striped, so memory stays bounded.
   */
  private final Object[] attachmentLocks = new Object[64];

  {
    for (int i = 0; i < attachmentLocks.length; i++) {
      attachmentLocks[i] = new Object();
    }
  }

  private Object lockFor(Attachment attachment) {
    return attachmentLocks[Math.floorMod(attachment.hashCode(), attachmentLocks.length)];
  }

  public Allocator(Ledger ledger, AllocationStore store, Random random) {
    this.ledger = ledger;
    this.store = store;
    this.random = random;
  }

  /**
   * Allocates one address from each pool for {@code attachment}, all or nothing: when a later pool
   * fails, the addresses this call created in earlier pools are deleted again. An attachment that
   * already holds an address in a pool gets the same one back.
   */
  public List<Lease> allocate(List<PoolView> pools, Attachment attachment, PodRef pod, String mac) {
    requireSynced();
    synchronized (lockFor(attachment)) {
      return allocateAll(pools, attachment, pod, mac);
    }
  }

  private List<Lease> allocateAll(
      List<PoolView> pools, Attachment attachment, PodRef pod, String mac) {
    List<Lease> result = new ArrayList<>();
    List<Lease> createdHere = new ArrayList<>();
    try {
      for (PoolView pool : pools) {
        Optional<Lease> existing = ledger.leaseOf(pool.name(), attachment);
        if (existing.isPresent()) {
          result.add(existing.get());
          continue;
        }
        Lease lease = allocateIn(pool, attachment, pod, mac);
        createdHere.add(lease);
        result.add(lease);
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
      throw e;
    }
  }

  private Lease allocateIn(PoolView pool, Attachment attachment, PodRef pod, String mac) {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      Optional<Ledger.Pick> pick = ledger.reserveFree(pool, random);
      if (pick.isEmpty()) {
        claimBlock(pool);
        continue;
      }
      Lease wanted =
          new Lease(
              pool.name(),
              pick.get().ip(),
              pick.get().block(),
              ledger.node(),
              attachment,
              pod,
              mac,
              null);
      Lease created;
      try {
        created = store.createAddress(wanted);
      } catch (RuntimeException e) {
        ledger.unreserve(pool.name(), wanted.ip());
        throw e;
      }
      if (created == null) {
        // Someone holds this name already, which this node's watch has not shown yet; the
        // watch will bring it, so move on to another address.
        ledger.unreserve(pool.name(), wanted.ip());
        log.info(
            "address {} of pool {} is taken already; trying another", wanted.ip(), pool.name());
        continue;
      }
      ledger.commit(created);
      log.info(
          "allocated {} from pool {} to {}/{} ({} {})",
          created.ip(),
          pool.name(),
          pod.namespace(),
          pod.name(),
          attachment.containerId(),
          attachment.ifName());
      return created;
    }
    throw exhausted(pool, "no free address after " + ATTEMPTS + " attempts");
  }

  /** Claims one more block of {@code pool} for this node, unless another thread just did. */
  private void claimBlock(PoolView pool) {
    int held = ledger.ownBlocks(pool.name()).size();
    synchronized (claimLocks.computeIfAbsent(pool.name(), p -> new Object())) {
      if (ledger.ownBlocks(pool.name()).size() > held) {
        return;
      }
      if (pool.maxBlocksPerNode() > 0 && held >= pool.maxBlocksPerNode()) {
        throw new AllocationException(
            AllocationException.Reason.BLOCK_LIMIT,
            "pool "
                + pool.name()
                + " has no free address in the "
                + held
                + " blocks node "
                + ledger.node()
                + " holds, and spec.maxBlocksPerNode ("
                + pool.maxBlocksPerNode()
                + ") allows no more");
      }
      for (Cidr block : ledger.unclaimedBlocks(pool, random, ATTEMPTS)) {
        if (store.claimBlock(pool.name(), block, ledger.node())) {
          ledger.blockSeen(pool.name(), block, ledger.node());
          log.info("claimed block {} of pool {} for node {}", block, pool.name(), ledger.node());
          return;
        }
        ledger.blockSeen(pool.name(), block, null);
      }
      throw exhausted(pool, "no unclaimed block is left");
    }
  }

  private AllocationException exhausted(PoolView pool, String why) {
    int blocks = ledger.ownBlocks(pool.name()).size();
    return new AllocationException(
        AllocationException.Reason.POOL_EXHAUSTED,
        "pool "
            + pool.name()
            + " is exhausted for node "
            + ledger.node()
            + ": "
            + why
            + " (this node holds "
            + blocks
            + " blocks of the pool; the pool has "
            + pool.layout().assignableCount()
            + " assignable addresses in "
            + pool.layout().blockCount()
            + " blocks)");
  }

  /**
   * Releases what {@code attachment} holds in the given pools: deletes each IPAddress (with its UID
   * as precondition) and lets the address rest. An attachment holding nothing is a success, and an
   * address since handed to another attachment is never touched.
   */
  public void release(List<String> pools, Attachment attachment) {
    synchronized (lockFor(attachment)) {
      for (String pool : pools) {
        Optional<Lease> lease = ledger.leaseOf(pool, attachment);
        if (lease.isPresent()) {
          release(lease.get());
        }
      }
    }
  }

  private void release(Lease lease) {
    store.deleteAddress(lease);
    ledger.released(lease);
    log.info(
        "released {} of pool {} from {}/{}",
        lease.ip(),
        lease.pool(),
        lease.pod().namespace(),
        lease.pod().name());
  }

  private void requireSynced() {
    if (!ledger.synced()) {
      throw new AllocationException(
          AllocationException.Reason.NOT_READY,
          "kipam-node on " + ledger.node() + " has not finished reading its allocations yet");
    }
  }
}
