package io.kipam.operator.audit;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.PreconditionedDelete;
import java.time.Clock;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One audit of every IPAddress in the cluster, page by page (a chunked LIST, all namespaces, of
 * {@code pageSize} items and a continue token), holding one page at a time. Each address is
 * classified ({@link OrphanRules}); an orphan is remembered ({@link Sightings}) and removed only
 * when a later audit, at least the grace period after the first, sees it orphaned for the same
 * reason, and a fresh GET just before the delete still shows the same object (UID) orphaned for
 * that reason. The delete carries a UID precondition, so an address allocated again under the same
 * name is never touched. Every removal gets an Event {@code OrphanRemoved} on the address, a metric
 * and a log line.
 */
public final class OrphanAudit {

  private static final Logger log = LoggerFactory.getLogger(OrphanAudit.class);

  private final KubernetesClient client;
  private final PreconditionedDelete delete;
  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final Clock clock;
  private final Sightings sightings;
  private final long pageSize;

  public OrphanAudit(
      KubernetesClient client,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics,
      Clock clock,
      Sightings sightings,
      int pageSize) {
    this.client = client;
    this.delete = delete;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
    this.sightings = sightings;
    this.pageSize = pageSize;
  }

  /**
   * Runs one audit; API errors end it early and leave the memory of earlier sightings as it was.
   */
  public void run() {
    long start = System.nanoTime();
    Instant now = clock.instant();
    ClusterFacts facts = ClusterFacts.forOneAudit(client);
    Set<AddressKey> orphans = new HashSet<>();
    int scanned = 0;
    int pages = 0;
    int removed = 0;
    String next = null;
    do {
      KubernetesResourceList<IPAddress> page =
          client
              .resources(IPAddress.class)
              .inAnyNamespace()
              .list(new ListOptionsBuilder().withLimit(pageSize).withContinue(next).build());
      for (IPAddress address : page.getItems()) {
        scanned++;
        Optional<OrphanRules.Verdict> verdict = OrphanRules.classify(address, facts);
        if (verdict.isEmpty()) {
          continue;
        }
        AddressKey key = AddressKey.of(address);
        orphans.add(key);
        if (sightings.seen(key, verdict.get().reason(), now) && remove(key, verdict.get())) {
          removed++;
        }
      }
      pages++;
      metrics.scanned(page.getItems().size());
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    sightings.retainOnly(orphans);
    double seconds = (System.nanoTime() - start) / 1e9;
    metrics.audited(seconds);
    log.info(
        "audit read {} IPAddresses ({} pages) in {} s: {} orphaned, {} removed",
        scanned,
        pages,
        String.format("%.1f", seconds),
        orphans.size(),
        removed);
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
