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
 *
 * <p>{@link #removeNamed} is the same fresh read and the same writes for one orphan named from
 * outside (by {@code kubectl kipam release}, from a report of {@code check}), without sightings.
 */
public final class OrphanRemover {

  private static final Logger log = LoggerFactory.getLogger(OrphanRemover.class);

  private final KubernetesClient client;
  private final PreconditionedDelete delete;
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Sightings sightings;
  private final AttachmentFinalizer finalizer;
  private final Set<AddressObject> orphans = new HashSet<>();
  private ClusterFacts removalFacts;
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

  /**
   * A remover of named orphans only ({@link #removeNamed}): no sightings, metrics of its own, the
   * operator's Events.
   */
  public static OrphanRemover oneShot(KubernetesClient client, EventRecorder events) {
    return new OrphanRemover(
        client,
        new PreconditionedDelete(client),
        events,
        new OperatorMetrics(),
        new Sightings(java.time.Duration.ZERO),
        new AttachmentFinalizer(client));
  }

  /** Starts an audit: no orphan seen yet. */
  void begin() {
    orphans.clear();
    removalFacts = null;
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
    if (removalFacts == null) {
      // Read when the first removal of this pass needs them, just before its writes.
      removalFacts = ClusterFacts.forRemovals(client);
    }
    Result result = remove(key, verdict.get().reason(), removalFacts, address);
    sightings.forget(key);
    if (result.outcome() == Outcome.REMOVED) {
      removed++;
    }
    return result.gone();
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

  /** What one removal found and did. */
  public enum Outcome {
    /** Deleted, or its attachment ended (its Node is gone), or both. */
    REMOVED,
    /** No object of that name exists any more. */
    GONE,
    /** Another object (another UID) holds the name now: an address allocated again. */
    REPLACED,
    /** The fresh read finds it orphaned no more: everything it names exists. */
    NOT_ORPHANED,
    /** Still an orphan, but for another reason than the one it was seen for. */
    OTHER_REASON,
    /** The delete's UID precondition failed, or the finalizer kept changing. */
    CHANGED
  }

  /**
   * What {@link #removeNamed} found and did.
   *
   * @param fresh the object as the fresh read found it; null for {@link Outcome#GONE}
   * @param verdict the fresh read's verdict, empty when it is no orphan (or was not read)
   * @param gone whether it holds its IP no more (deleted and no finalizer left)
   */
  public record Result(
      Outcome outcome, IPAddress fresh, Optional<OrphanRules.Verdict> verdict, boolean gone) {}

  /**
   * Removes the orphan {@code key}, seen orphaned for {@code reason}, if a fresh read with {@code
   * facts} (which must not cache) still finds the same object (UID) orphaned for that reason; the
   * removal is the audit's ({@link OrphanRules.Removal}), every delete with a UID precondition.
   */
  public Result removeNamed(AddressObject key, OrphanReason reason, OrphanRules.Facts facts) {
    return remove(key, reason, facts, null);
  }

  /**
   * The fresh read and the writes. An address of a Node that is gone, as the audit pass listed it
   * ({@code listed}), is not read again: its Pod's absence is read afresh from the Node's Pods, and
   * every write names its UID (the delete's precondition, the finalizer patch's test), so a
   * vanished node's addresses cost writes, not a read each. Any other is read again first.
   */
  private Result remove(
      AddressObject key, OrphanReason seen, OrphanRules.Facts facts, IPAddress listed) {
    String node = listed == null ? null : listed.getSpec().getNode();
    boolean nodeGone = node != null && !facts.nodeExists(node);
    // The facts answer a gone Node's Pods from their list; a UID never comes back, so a Pod missing
    // there is gone for good whatever happens to the Node meanwhile.
    boolean podGone = nodeGone && OrphanRules.podGone(listed, facts);
    IPAddress fresh =
        podGone
            ? listed
            : client
                .resources(IPAddress.class)
                .inNamespace(key.namespace())
                .withName(key.name())
                .get();
    if (fresh == null) {
      return new Result(Outcome.GONE, null, Optional.empty(), false);
    }
    if (!key.uid().equals(fresh.getMetadata().getUid())) {
      return new Result(Outcome.REPLACED, fresh, Optional.empty(), false);
    }
    Optional<OrphanRules.Verdict> now = OrphanRules.classify(fresh, facts);
    if (now.isEmpty()) {
      return new Result(Outcome.NOT_ORPHANED, fresh, now, false);
    }
    if (now.get().reason() != seen) {
      return new Result(Outcome.OTHER_REASON, fresh, now, false);
    }
    if (seen == OrphanReason.NODE
        && listed != null
        && !podGone
        && client.nodes().withName(fresh.getSpec().getNode()).get() != null) {
      // The pass read each Node once; a live Pod's address waits for a read of its own Node.
      return new Result(Outcome.NOT_ORPHANED, fresh, Optional.empty(), false);
    }
    OrphanRules.Removal removal = OrphanRules.Removal.of(fresh, facts);
    String what =
        "IPAddress "
            + key
            + " ("
            + fresh.getSpec().getIp()
            + " of pool "
            + fresh.getSpec().getPool()
            + ")";
    Optional<IPAddress> deleted = Optional.empty();
    if (removal.delete()) {
      PreconditionedDelete.Answer answer = delete.address(key.namespace(), key.name(), key.uid());
      PreconditionedDelete.Outcome outcome = answer.outcome();
      if (outcome == PreconditionedDelete.Outcome.GONE) {
        return new Result(Outcome.GONE, fresh, now, false);
      }
      if (outcome != PreconditionedDelete.Outcome.DELETED) {
        return new Result(Outcome.CHANGED, fresh, now, false);
      }
      deleted = addressIn(answer.body());
      String message = "removed orphaned " + what + ": " + now.get().detail();
      log.info("{}", message);
      metrics.orphanRemoved(seen.label());
      events.record(fresh, EventRecorder.Type.Normal, "OrphanRemoved", message);
    }
    boolean attached = AddressLifecycle.attached(fresh);
    if (removal.endAttachment()) {
      attached =
          endAttachment(key, deleted.orElse(fresh), what, now.get())
              == AttachmentFinalizer.Outcome.CHANGING;
      if (attached && !removal.delete()) {
        return new Result(Outcome.CHANGED, fresh, now, false);
      }
    }
    List<String> finalizers = fresh.getMetadata().getFinalizers();
    boolean othersHold =
        finalizers != null
            && finalizers.stream().anyMatch(f -> !ApiConstants.FINALIZER_ATTACHMENT.equals(f));
    return new Result(Outcome.REMOVED, fresh, now, !attached && !othersHold);
  }

  /** The IPAddress a delete answered with (its finalizer keeps it), if the answer holds one. */
  private Optional<IPAddress> addressIn(String body) {
    if (body == null) {
      return Optional.empty();
    }
    try {
      IPAddress object = client.getKubernetesSerialization().unmarshal(body, IPAddress.class);
      return object != null && object.getMetadata() != null
          ? Optional.of(object)
          : Optional.empty();
    } catch (RuntimeException unreadable) {
      return Optional.empty(); // the finalizer's removal reads it afresh instead
    }
  }

  /**
   * Removes {@code kipam.io/attachment} of an address whose Node is gone, first as {@code known}
   * shows it.
   */
  private AttachmentFinalizer.Outcome endAttachment(
      AddressObject key, IPAddress known, String what, OrphanRules.Verdict verdict) {
    AttachmentFinalizer.Outcome outcome =
        finalizer.remove(key.namespace(), key.name(), key.uid(), known);
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
        events.record(known, EventRecorder.Type.Normal, "AttachmentEnded", message);
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
