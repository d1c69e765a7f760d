package io.kipam.node.kube;

import io.kipam.api.v1alpha1.AddressLifecycle;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.node.alloc.Allocator;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.kube.AttachmentRules.Action;
import io.kipam.node.kube.AttachmentRules.PodState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each of this node's addresses taken while its attachment lives, and ends the attachment
 * once it is over (design §5b, decided by {@link AttachmentRules}): looks at every IPAddress of
 * this node in the node's address watch, with its pod in the node's pod watch, and
 *
 * <ul>
 *   <li>removes {@code kipam.io/attachment} from a deleted object whose pod is gone (confirmed by a
 *       fresh read) or has finished; the address then rests for the pool's reuse delay;
 *   <li>releases the address of a pod that has finished without a DEL (graceful node shutdown, a
 *       missed DEL);
 *   <li>releases the address of a pod the pod watch has not shown for the orphan grace when a fresh
 *       read finds it gone (the node's own orphan audit; one read per object per grace);
 *   <li>leaves a deleted object whose pod still lives Terminating, with one Event saying why;
 *   <li>gives an object from before the finalizer existed the finalizer and, for a static pod, its
 *       Node as holder (upgrade).
 * </ul>
 *
 * Nothing is looked at before the node's record has synced. The finalizer is the record: a daemon
 * that restarts finds every deleted-but-held object where it left it.
 */
public final class AttachmentKeeper {

  private static final Logger log = LoggerFactory.getLogger(AttachmentKeeper.class);

  /**
   * How old an IPAddress must be, and how long apart the fresh reads of its pod, before an address
   * whose pod the node's pod watch does not show is released: the watch may lag behind an ADD
   * ({@code KIPAM_ORPHAN_GRACE_SECONDS}).
   */
  private final Duration orphanGrace;

  /** Objects told about in an Event, so each is told once; bounded. */
  private static final int REMEMBERED = 4096;

  private final NodeWatch watch;
  private final Ledger ledger;
  private final Allocator allocator;
  private final KubernetesStore store;
  private final AddressEvents events;
  private final Map<String, Instant> orphanReads =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
          return size() > REMEMBERED;
        }
      };
  private final Clock clock;
  private final Set<String> told =
      Collections.newSetFromMap(
          new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
              return size() > REMEMBERED;
            }
          });

  public AttachmentKeeper(
      NodeWatch watch,
      Ledger ledger,
      Allocator allocator,
      KubernetesStore store,
      AddressEvents events,
      Clock clock,
      Duration orphanGrace) {
    this.clock = clock;
    this.orphanGrace = orphanGrace;
    this.watch = watch;
    this.ledger = ledger;
    this.allocator = allocator;
    this.store = store;
    this.events = events;
  }

  /** One look at every address of this node; a failure about one object is tried next time. */
  public void keep() {
    if (!ledger.synced()) {
      return;
    }
    Instant now = clock.instant();
    // A pod read afresh is read again once the grace has passed since.
    orphanReads.values().removeIf(at -> at.plus(orphanGrace).isBefore(now));
    for (IPAddress object : watch.addressObjects()) {
      try {
        keep(object, now);
      } catch (RuntimeException e) {
        log.info(
            "cannot settle the attachment of IPAddress {}/{} yet: {}",
            object.getMetadata().getNamespace(),
            object.getMetadata().getName(),
            e.toString());
      }
    }
  }

  private void keep(IPAddress object, Instant now) {
    Lease lease;
    try {
      lease = Leases.from(object);
    } catch (RuntimeException unreadable) {
      return; // the address watch has said so; it stays taken while it exists
    }
    if (!ledger.node().equals(lease.node())) {
      return; // labelled for this node but naming another: the audit reports it, no one here acts
    }
    PodSummary pod = watch.cachedPod(lease.pod().namespace(), lease.pod().name());
    boolean nodeHeld = AddressLifecycle.heldByNode(object);
    AttachmentRules.Facts facts =
        new AttachmentRules.Facts(
            AddressLifecycle.deleting(object),
            AddressLifecycle.attached(object),
            nodeHeld,
            state(pod, lease),
            settled(object, now));
    Action action = AttachmentRules.decide(facts);
    switch (action) {
      case NOTHING -> {}
      case ADOPT -> adopt(object, pod, lease, nodeHeld);
      case RELEASE_FINISHED -> {
        log.info(
            "pod {}/{} has finished (phase {}): its attachment {} is over",
            lease.pod().namespace(),
            lease.pod().name(),
            pod.phase(),
            lease.attachment().containerId());
        allocator.releaseFinished(lease);
      }
      case END -> allocator.endAttachment(lease);
      case RELEASE_IF_POD_GONE -> {
        if (orphanReads.containsKey(object.getMetadata().getUid())) {
          return; // read within the grace already
        }
        Optional<PodSummary> fresh = watch.freshPod(lease.pod().namespace(), lease.pod().name());
        orphanReads.put(object.getMetadata().getUid(), now);
        if (state(fresh.orElse(null), lease) == PodState.ABSENT) {
          String why =
              "its pod "
                  + lease.pod().namespace()
                  + "/"
                  + lease.pod().name()
                  + " (uid "
                  + lease.pod().uid()
                  + ") does not exist";
          log.info("released orphaned IPAddress {} ({}): {}", lease.name(), lease.ip(), why);
          events.record(object, "OrphanReleased", "released: " + why);
          allocator.releaseFinished(lease);
        }
      }
      case END_IF_POD_GONE -> {
        Optional<PodSummary> fresh = watch.freshPod(lease.pod().namespace(), lease.pod().name());
        PodState read = state(fresh.orElse(null), lease);
        if (read == PodState.ABSENT || read == PodState.FINISHED) {
          allocator.endAttachment(lease);
        } else {
          tell(object, lease, read, false);
        }
      }
      case KEEP -> tell(object, lease, facts.pod(), nodeHeld);
    }
  }

  /** Older than the orphan grace: a pod missing from the watch is not one it has yet to show. */
  private boolean settled(IPAddress object, Instant now) {
    String created = object.getMetadata().getCreationTimestamp();
    return created != null && Instant.parse(created).plus(orphanGrace).isBefore(now);
  }

  private static PodState state(PodSummary pod, Lease lease) {
    if (pod == null || !lease.pod().uid().equals(pod.getMetadata().getUid())) {
      return PodState.ABSENT;
    }
    String phase = pod.phase();
    if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
      return PodState.FINISHED;
    }
    return pod.getMetadata().getDeletionTimestamp() != null ? PodState.TERMINATING : PodState.LIVE;
  }

  private void adopt(IPAddress object, PodSummary pod, Lease lease, boolean nodeHeld) {
    boolean staticPod =
        !nodeHeld
            && pod != null
            && lease.pod().uid().equals(pod.getMetadata().getUid())
            && NodeWatch.mirror(pod);
    store.adopt(object, staticPod);
  }

  /** One Event per deleted object whose attachment lives: why it stays Terminating. */
  private void tell(IPAddress object, Lease lease, PodState pod, boolean nodeHeld) {
    if (!told.add(object.getMetadata().getUid())) {
      return;
    }
    String who = lease.pod().namespace() + "/" + lease.pod().name();
    String why =
        nodeHeld
            ? "kept: static pod " + who + " is held by its Node; its CNI DEL frees the address"
            : pod == PodState.TERMINATING
                ? "kept: pod " + who + " is still Terminating"
                : "kept: pod " + who + " still runs";
    log.info(
        "IPAddress {}/{} ({} of pool {}) was deleted but stays: {}",
        object.getMetadata().getNamespace(),
        object.getMetadata().getName(),
        lease.ip(),
        lease.pool(),
        why);
    events.record(object, "AttachmentKept", why);
  }
}
