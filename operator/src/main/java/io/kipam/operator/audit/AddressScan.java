package io.kipam.operator.audit;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the audit and {@code kipam-operator check} read the IPAddresses: every one of the cluster,
 * page by page (a chunked LIST, all namespaces, of {@code pageSize} items and a continue token),
 * holding one page at a time. The first pass offers each address to the caller and counts the ones
 * that still hold their IP for {@link Duplicates}; {@link #duplicates} runs the second pass only
 * when the first found an address held more than once. One scan per audit or check.
 *
 * <p>A continue token names the snapshot its first page was read from, and expires when etcd's
 * history is compacted past it (kube-apiserver compacts every 5 minutes by default): the next page
 * answers 410 Gone. A pass that meets it starts again from its first page, and what it had counted
 * is forgotten, so no address is counted twice; after {@link #MAX_RESTARTS} restarts of one pass
 * the 410 ends the scan, as any other API error does.
 */
public final class AddressScan {

  /** Restarts of one pass after an expired continue token before the scan gives up. */
  public static final int MAX_RESTARTS = 3;

  private static final Logger log = LoggerFactory.getLogger(AddressScan.class);

  private final KubernetesClient client;
  private final ClusterFacts facts;
  private final long pageSize;
  private final IntConsumer pageRead;
  private final Duplicates found = new Duplicates();
  private int restarts;

  /**
   * @param pageRead told how many addresses each page held (the audit's metric)
   */
  public AddressScan(
      KubernetesClient client, ClusterFacts facts, int pageSize, IntConsumer pageRead) {
    this.client = client;
    this.facts = facts;
    this.pageSize = pageSize;
    this.pageRead = pageRead;
  }

  /**
   * The first pass: each address is offered to {@code released}, which says whether it holds its IP
   * no longer (the audit removed it); the others are counted for duplicates. How many addresses
   * were read.
   */
  public int firstPass(Predicate<IPAddress> released) {
    return pages(
        address -> {
          if (!released.test(address)) {
            found.see(network(address, facts), address.getSpec().getIp());
          }
        },
        found::forgetSeen);
  }

  /**
   * Every address of a network held by more than one IPAddress, with its holders; a second pass
   * over the pages, only if the first found any.
   */
  public Map<Duplicates.Slot, List<Duplicates.Holder>> duplicates() {
    if (found.found()) {
      pages(
          address ->
              found.collect(
                  network(address, facts),
                  address.getSpec().getIp(),
                  new Duplicates.Holder(AddressObject.of(address), address.getSpec().getPool())),
          found::forgetHolders);
    }
    return found.result();
  }

  /** How many times a pass of this scan started again after an expired continue token. */
  public int restarts() {
    return restarts;
  }

  /**
   * Every IPAddress, one page at a time; how many there were. {@code restart} forgets what the pass
   * counted before it starts again from the first page.
   */
  private int pages(Consumer<IPAddress> each, Runnable restart) {
    int scanned = 0;
    int restartsOfPass = 0;
    String next = null;
    while (true) {
      KubernetesResourceList<IPAddress> page;
      try {
        page =
            client
                .resources(IPAddress.class)
                .inAnyNamespace()
                .list(new ListOptionsBuilder().withLimit(pageSize).withContinue(next).build());
      } catch (KubernetesClientException e) {
        if (e.getCode() != 410 || next == null || restartsOfPass == MAX_RESTARTS) {
          throw e;
        }
        restartsOfPass++;
        restarts++;
        log.info(
            "the audit's continue token expired after {} IPAddresses (etcd compacted); reading"
                + " from the first page again ({} of at most {} restarts)",
            scanned,
            restartsOfPass,
            MAX_RESTARTS);
        restart.run();
        scanned = 0;
        next = null;
        continue;
      }
      page.getItems().forEach(each);
      scanned += page.getItems().size();
      pageRead.accept(page.getItems().size());
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
      if (next == null || next.isEmpty()) {
        return scanned;
      }
    }
  }

  /**
   * The network an address's pool belongs to ({@code ""} for none); for a pool that is gone, a key
   * of that pool alone.
   */
  static String network(IPAddress address, ClusterFacts facts) {
    String pool = address.getSpec().getPool();
    Optional<IPPool> found = facts.pool(pool);
    if (found.isEmpty()) {
      return "pool:" + pool;
    }
    String network = found.get().getSpec() == null ? null : found.get().getSpec().getNetwork();
    return network == null ? "" : network;
  }
}
