package io.kipam.node.alloc;

import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settling what a write of unknown outcome, or another node's object, left uncertain: a fresh read
 * of the name decides. An earlier ADD of the same attachment is settled before a retry picks an
 * address; the rest in the background ({@link #settle}, {@link #recheckForeign}). Each settling
 * runs under the attachment's lock, as the allocations and releases of that attachment do.
 */
final class Settling {

  private static final Logger log = LoggerFactory.getLogger(Settling.class);

  private final Ledger ledger;
  private final AllocationStore store;
  private final Duration settleAfter;
  private final KeyedLocks<Attachment> attachmentLocks;
  private final Consumer<Lease> release;

  /**
   * @param settleAfter how long a write of unknown outcome may still land
   * @param attachmentLocks the allocator's per-attachment locks
   * @param release deletes an object a failed ADD of this node wrote, and lets its address rest
   */
  Settling(
      Ledger ledger,
      AllocationStore store,
      Duration settleAfter,
      KeyedLocks<Attachment> attachmentLocks,
      Consumer<Lease> release) {
    this.ledger = ledger;
    this.store = store;
    this.settleAfter = settleAfter;
    this.attachmentLocks = attachmentLocks;
    this.release = release;
  }

  /**
   * Settles an earlier ADD of the same attachment whose write had an unknown outcome, before this
   * one picks an address: a runtime retries at once, often before the node's watch has shown the
   * object that write created. A fresh read decides. The object is there (that write happened): it
   * is this attachment's address, returned again. No object, and the write may still land (it is
   * younger than the settle delay): the runtime is told to try again, since picking another address
   * now could leave the attachment with two. No object and older than that, or the name held by
   * someone else: settled, and this ADD allocates as usual.
   */
  Optional<Lease> earlierAttempt(PoolView pool, Attachment attachment, String podUid) {
    Optional<Uncertain> earlier = ledger.uncertainOf(pool.name(), attachment);
    if (earlier.isEmpty()) {
      return Optional.empty();
    }
    Uncertain u = earlier.get();
    Optional<Lease> found = store.readAddress(u.wanted());
    if (found.isPresent()) {
      Lease object = found.get();
      ledger.found(object);
      if (object.writtenFor(attachment, podUid)) {
        log.info(
            "the lost write of {} for {}/{} happened: it is the attachment's address",
            object.ip(),
            object.pod().namespace(),
            object.pod().name());
        return Optional.of(object);
      }
      ledger.settled(u);
      return Optional.empty();
    }
    if (!ledger.uncertainFor(settleAfter).contains(u)) {
      throw new StoreUnavailableException(
          "an earlier ADD of this attachment may still be writing address "
              + u.wanted().ip()
              + " of pool "
              + pool.name()
              + "; try again",
          null);
    }
    ledger.settled(u);
    return Optional.empty();
  }

  /**
   * Reads again each object of another node that holds a name this node wanted (see {@link
   * Ledger#foreignSeen}) and last read {@code every} ago: gone, or another object by now, and its
   * address is free again after resting, without a restart.
   */
  void recheckForeign(Duration every) {
    for (Lease lease : ledger.foreignDue(every)) {
      try {
        Optional<Lease> now = store.readAddress(lease);
        if (now.isEmpty() || !lease.objectUid().equals(now.get().objectUid())) {
          log.info(
              "IPAddress {}/{} of node {}, which held {} of pool {}, is gone",
              lease.pod().namespace(),
              lease.name(),
              lease.node(),
              lease.ip(),
              lease.pool());
          ledger.objectGone(lease.address(), lease.object());
          now.ifPresent(ledger::found);
        }
      } catch (RuntimeException e) {
        log.info("cannot read {} again yet: {}", lease.ip(), e.toString());
      }
    }
  }

  /**
   * Settles the addresses uncertain for at least {@code after}: a fresh read of each name tells
   * whether the write happened. Absent: the address rests, then is free. Present and written by an
   * ADD that failed: deleted, so a failed ADD leaves nothing behind (a retried ADD that found the
   * object first has settled it already). Held by an object of someone else: recorded as that
   * holder's. A read that fails leaves the address uncertain for the next round.
   */
  void settle(Duration after) {
    for (Uncertain u : ledger.uncertainFor(after)) {
      try {
        attachmentLocks.with(u.wanted().attachment(), () -> settleOne(u));
      } catch (RuntimeException e) {
        log.info("cannot settle {} yet: {}", u.wanted().ip(), e.toString());
      }
    }
  }

  private Void settleOne(Uncertain u) {
    if (!ledger.stillUncertain(u)) {
      // Settled while this waited for the attachment's lock: a retried ADD found the object and
      // returned it to the runtime, or a read settled it. The address is no failed ADD's any more.
      return null;
    }
    Optional<Lease> found = store.readAddress(u.wanted());
    if (found.isEmpty()) {
      log.info("settled {} of pool {}: no object holds it", u.wanted().ip(), u.wanted().pool());
      ledger.settled(u);
      return null;
    }
    Lease object = found.get();
    boolean ours = object.writtenFor(u.wanted().attachment(), u.wanted().pod().uid());
    if (ours) {
      // Written by an ADD that failed, and no retry of it took the address (that would have
      // settled it): nobody was told of this address, so it goes.
      release.accept(object);
    } else {
      ledger.found(object);
    }
    log.info(
        "settled {} of pool {}: it was held by {}/{} ({})",
        object.ip(),
        object.pool(),
        object.pod().namespace(),
        object.pod().name(),
        ours ? "written by a failed ADD of this node, now deleted" : "not this node's write");
    ledger.settled(u);
    return null;
  }
}
