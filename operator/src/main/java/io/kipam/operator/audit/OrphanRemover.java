package io.kipam.operator.audit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.PreconditionedDelete;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The orphan part of an audit. Each address is classified ({@link OrphanRules}); an orphan is
 * remembered ({@link Sightings}) and removed only when a later audit, at least the grace period
 * after the first, sees it orphaned for the same reason, and a fresh GET just before the delete
 * still shows the same object (UID) orphaned for that reason. The delete carries a UID
 * precondition, so an address allocated again under the same name is never touched. Every removal
 * gets an Event {@code OrphanRemoved} on the address, a metric and a log line. One audit at a time.
 */
final class OrphanRemover {

  private static final Logger log = LoggerFactory.getLogger(OrphanRemover.class);

  private final KubernetesClient client;
  private final PreconditionedDelete delete;
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Sightings sightings;
  private final Set<AddressKey> orphans = new HashSet<>();
  private int removed;

  OrphanRemover(
      KubernetesClient client,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics,
      Sightings sightings) {
    this.client = client;
    this.delete = delete;
    this.events = events;
    this.metrics = metrics;
    this.sightings = sightings;
  }

  /** Starts an audit: no orphan seen yet. */
  void begin() {
    orphans.clear();
    removed = 0;
  }

  /** Classifies {@code address} and removes it when it is due; true when it was removed. */
  boolean consider(IPAddress address, OrphanRules.Facts facts, Instant now) {
    Optional<OrphanRules.Verdict> verdict = OrphanRules.classify(address, facts);
    if (verdict.isEmpty()) {
      return false;
    }
    AddressKey key = AddressKey.of(address);
    orphans.add(key);
    if (sightings.seen(key, verdict.get().reason(), now) && remove(key, verdict.get())) {
      removed++;
      return true;
    }
    return false;
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

  /** The fresh read and the delete; true when this audit deleted the address. */
  private boolean remove(AddressKey key, OrphanRules.Verdict seen) {
    IPAddress fresh =
        client.resources(IPAddress.class).inNamespace(key.namespace()).withName(key.name()).get();
    if (fresh == null || !key.uid().equals(fresh.getMetadata().getUid())) {
      sightings.forget(key);
      return false;
    }
    Optional<OrphanRules.Verdict> now = OrphanRules.classify(fresh, ClusterFacts.uncached(client));
    if (now.isEmpty() || now.get().reason() != seen.reason()) {
      sightings.forget(key);
      return false;
    }
    PreconditionedDelete.Outcome outcome = delete.address(key.namespace(), key.name(), key.uid());
    sightings.forget(key);
    if (outcome != PreconditionedDelete.Outcome.DELETED) {
      return false;
    }
    String message =
        "removed orphaned IPAddress "
            + key
            + " ("
            + fresh.getSpec().getIp()
            + " of pool "
            + fresh.getSpec().getPool()
            + "): "
            + now.get().detail();
    log.info("{}", message);
    metrics.orphanRemoved(seen.reason().label());
    events.record(fresh, EventRecorder.Type.Normal, "OrphanRemoved", message);
    return true;
  }
}
