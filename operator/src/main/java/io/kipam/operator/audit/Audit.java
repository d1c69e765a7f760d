package io.kipam.operator.audit;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.kube.PreconditionedDelete;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One audit of every IPAddress in the cluster, page by page (a chunked LIST, all namespaces, of
 * {@code pageSize} items and a continue token), holding one page at a time. Each address is looked
 * at for being an orphan ({@link OrphanRemover}) and counted for duplicates ({@link Duplicates});
 * only when some address is held twice does a second pass gather the holders, which {@link
 * DuplicateReporter} reports. See {@code docs/audit.md}.
 */
public final class Audit implements Runnable {

  private static final Logger log = LoggerFactory.getLogger(Audit.class);

  private final KubernetesClient client;
  private final OperatorMetrics metrics;
  private final Clock clock;
  private final long pageSize;
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
    this.orphans = new OrphanRemover(client, delete, events, metrics, sightings);
    this.duplicates = new DuplicateReporter(events, metrics, summary);
  }

  /** Runs one audit; an API error ends it early and changes nothing it has not finished. */
  @Override
  public void run() {
    long start = System.nanoTime();
    Instant now = clock.instant();
    ClusterFacts facts = ClusterFacts.forOneAudit(client);
    Duplicates found = new Duplicates();
    orphans.begin();
    int scanned =
        pages(
            address -> {
              // An address removed as an orphan holds nothing any more.
              if (!orphans.consider(address, facts, now)) {
                found.see(network(address, facts), address.getSpec().getIp());
              }
            });
    orphans.end();
    if (found.found()) {
      pages(
          address ->
              found.collect(
                  network(address, facts),
                  address.getSpec().getIp(),
                  new Duplicates.Holder(AddressKey.of(address), address.getSpec().getPool())));
    }
    duplicates.report(found.result(), facts);
    double seconds = (System.nanoTime() - start) / 1e9;
    metrics.audited(seconds);
    log.info(
        "audit read {} IPAddresses in {} s: {} orphaned, {} removed, {} addresses held twice",
        scanned,
        String.format("%.1f", seconds),
        orphans.orphans(),
        orphans.removed(),
        found.result().size());
  }

  /** Every IPAddress, one page at a time; how many there were. */
  private int pages(Consumer<IPAddress> each) {
    int scanned = 0;
    String next = null;
    do {
      KubernetesResourceList<IPAddress> page =
          client
              .resources(IPAddress.class)
              .inAnyNamespace()
              .list(new ListOptionsBuilder().withLimit(pageSize).withContinue(next).build());
      page.getItems().forEach(each);
      scanned += page.getItems().size();
      metrics.scanned(page.getItems().size());
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    return scanned;
  }

  /**
   * The network an address's pool belongs to ({@code ""} for none); for a pool that is gone, a key
   * of that pool alone.
   */
  private static String network(IPAddress address, ClusterFacts facts) {
    String pool = address.getSpec().getPool();
    Optional<IPPool> found = facts.pool(pool);
    if (found.isEmpty()) {
      return "pool:" + pool;
    }
    String network = found.get().getSpec() == null ? null : found.get().getSpec().getNetwork();
    return network == null ? "" : network;
  }
}
