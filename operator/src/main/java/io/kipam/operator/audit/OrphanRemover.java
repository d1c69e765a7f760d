package io.kipam.operator.audit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.AddressLifecycle;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AttachmentFinalizer;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.runtime.client.PreconditionedDelete;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The orphan part of an audit. Each address is classified ({@link OrphanRules}); an orphan is
 * remembered ({@link Sightings}) and removed only when a later audit, at least the grace period
 * after the first, sees it orphaned for the same reason, and a fresh GET just before the writes
 * still shows the same object (UID) orphaned for that reason. Removing it ({@link
 * OrphanRules.Removal}) is a delete with a UID precondition, unless it is being deleted already;
 * and, only when its Node is gone, the removal of the finalizer {@code kipam.io/attachment} that no
 * daemon is left to remove ({@link AttachmentFinalizer}). An address allocated again under the same
 * name is never touched. A delete gets an Event {@code OrphanRemoved}, the end of an attachment an
 * Event {@code AttachmentEnded}; each a metric and a log line. A Terminating address whose Node
 * exists is its daemon's: only counted. One audit at a time.
 */
final class OrphanRemover {

  private static final Logger log = LoggerFactory.getLogger(OrphanRemover.class);

  private final KubernetesClient client;
  private final PreconditionedDelete delete;
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Sightings sightings;
  private final AttachmentFinalizer finalizer;
  private final Set<AddressObject> orphans = new HashSet<>();
  private int removed;
  private int keptByNodes;

  OrphanRemover(
      KubernetesClient client,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics,
      Sightings sightings,
      AttachmentFinalizer finalizer) {
    this.client = client;
    this.finalizer = finalizer;
    this.delete = delete;
    this.events = events;
    this.metrics = metrics;
    this.sightings = sightings;
  }

  /** Starts an audit: no orphan seen yet. */
  void begin() {
    orphans.clear();
    removed = 0;
    keptByNodes = 0;
  }

  /**
   * Classifies {@code address} and removes it when it is due; true when it is gone (it holds its IP
   * no longer). One deleted but still held by a finalizer is not gone.
   */
  boolean consider(IPAddress address, OrphanRules.Facts facts, Instant now) {
    Optional<OrphanRules.Verdict> verdict = OrphanRules.classify(address, facts);
    if (verdict.isEmpty()) {
      if (OrphanRules.keptBy(address, facts).isPresent()) {
        keptByNodes++;
      }
      return false;
    }
    AddressObject key = AddressObject.of(address);
    if (!orphans.add(key)) {
      return false; // seen in this audit already, by a pass that started again: one sighting
    }
    if (!sightings.seen(key, verdict.get().reason(), now)) {
      return false;
    }
    Optional<Done> done = remove(key, verdict.get());
    done.ifPresent(d -> removed++);
    return done.map(Done::gone).orElse(false);
  }

  /** Ends a complete audit: candidates it did not see orphaned are forgotten. */
  void end() {
    sightings.retainOnly(orphans);
  }

  int orphans() {
    return orphans.size();
  }

  int removed() {
    return removed;
  }

  /** Terminating addresses whose Node exists, left to its daemon. */
  int keptByNodes() {
    return keptByNodes;
  }

  /** What a removal did; {@code gone} when the object no longer exists. */
  private record Done(boolean gone) {}

  /** The fresh read and the writes; empty when this audit changed nothing. */
  private Optional<Done> remove(AddressObject key, OrphanRules.Verdict seen) {
    IPAddress fresh =
        client.resources(IPAddress.class).inNamespace(key.namespace()).withName(key.name()).get();
    if (fresh == null || !key.uid().equals(fresh.getMetadata().getUid())) {
      sightings.forget(key);
      return Optional.empty();
    }
    Optional<OrphanRules.Verdict> now = OrphanRules.classify(fresh, ClusterFacts.uncached(client));
    sightings.forget(key);
    if (now.isEmpty() || now.get().reason() != seen.reason()) {
      return Optional.empty();
    }
    OrphanRules.Removal removal = OrphanRules.Removal.of(fresh, now.get());
    String what =
        "IPAddress "
            + key
            + " ("
            + fresh.getSpec().getIp()
            + " of pool "
            + fresh.getSpec().getPool()
            + ")";
    if (removal.delete()) {
      PreconditionedDelete.Outcome outcome =
          delete.address(key.namespace(), key.name(), key.uid()).outcome();
      if (outcome != PreconditionedDelete.Outcome.DELETED) {
        return Optional.empty();
      }
      String message = "removed orphaned " + what + ": " + now.get().detail();
      log.info("{}", message);
      metrics.orphanRemoved(seen.reason().label());
      events.record(fresh, EventRecorder.Type.Normal, "OrphanRemoved", message);
    }
    boolean attached = AddressLifecycle.attached(fresh);
    if (removal.endAttachment()) {
      attached = endAttachment(key, fresh, what, now.get()) == AttachmentFinalizer.Outcome.CHANGING;
    }
    List<String> finalizers = fresh.getMetadata().getFinalizers();
    boolean othersHold =
        finalizers != null
            && finalizers.stream().anyMatch(f -> !ApiConstants.FINALIZER_ATTACHMENT.equals(f));
    return Optional.of(new Done(!attached && !othersHold));
  }

  /** Removes {@code kipam.io/attachment} of an address whose Node is gone. */
  private AttachmentFinalizer.Outcome endAttachment(
      AddressObject key, IPAddress fresh, String what, OrphanRules.Verdict verdict) {
    AttachmentFinalizer.Outcome outcome = finalizer.remove(key.namespace(), key.name(), key.uid());
    switch (outcome) {
      case REMOVED -> {
        String message =
            "ended the attachment of "
                + what
                + ": "
                + verdict.detail()
                + ", so no kipam-node can; removed the finalizer "
                + ApiConstants.FINALIZER_ATTACHMENT;
        log.info("{}", message);
        metrics.attachmentEnded();
        events.record(fresh, EventRecorder.Type.Normal, "AttachmentEnded", message);
      }
      case CHANGING ->
          log.warn(
              "{} kept changing while its finalizer {} was removed; the next audits try again",
              what,
              ApiConstants.FINALIZER_ATTACHMENT);
      case ABSENT -> {}
    }
    return outcome;
  }
}
