package io.kipam.operator.audit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AttachmentFinalizer;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.runtime.client.PreconditionedDelete;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One audit of every IPAddress in the cluster, read page by page by {@link AddressScan}. Each
 * address is looked at for being an orphan ({@link OrphanRemover}) and counted for duplicates
 * ({@link Duplicates}); only when some address is held twice does a second pass gather the holders,
 * which {@link DuplicateReporter} reports. See {@code docs/audit.md}.
 */
public final class Audit implements Runnable {

  private static final Logger log = LoggerFactory.getLogger(Audit.class);

  private final KubernetesClient client;
  private final OperatorMetrics metrics;
  private final Clock clock;
  private final int pageSize;
  private final OrphanRemover orphans;
  private final DuplicateReporter duplicates;

  public Audit(
      KubernetesClient client,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics,
      Clock clock,
      Sightings sightings,
      DuplicateSummary summary,
      int pageSize) {
    this.client = client;
    this.metrics = metrics;
    this.clock = clock;
    this.pageSize = pageSize;
    this.orphans =
        new OrphanRemover(
            client, delete, events, metrics, sightings, new AttachmentFinalizer(client));
    this.duplicates = new DuplicateReporter(events, metrics, summary);
  }

  /** Runs one audit; an API error ends it early and changes nothing it has not finished. */
  @Override
  public void run() {
    long start = System.nanoTime();
    Instant now = clock.instant();
    ClusterFacts facts = ClusterFacts.forOneAudit(client);
    AddressScan scan = new AddressScan(client, facts, pageSize, metrics::scanned);
    orphans.begin();
    // An address removed as an orphan holds nothing any more.
    int scanned = scan.firstPass(address -> orphans.consider(address, facts, now));
    orphans.end();
    Map<Duplicates.Slot, List<Duplicates.Holder>> found = scan.duplicates();
    duplicates.report(found, facts);
    double seconds = (System.nanoTime() - start) / 1e9;
    metrics.audited(seconds);
    metrics.auditRestarted(scan.restarts());
    metrics.orphansSeen(orphans.orphans());
    log.info(
        "audit read {} IPAddresses in {} s: {} orphaned, {} removed, {} terminating kept by their"
            + " node, {} addresses held twice; {} restarts after an expired continue token",
        scanned,
        String.format("%.1f", seconds),
        orphans.orphans(),
        orphans.removed(),
        orphans.keptByNodes(),
        found.size(),
        scan.restarts());
  }
}
