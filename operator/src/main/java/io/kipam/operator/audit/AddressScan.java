package io.kipam.operator.audit;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Predicate;

/**
 * How the audit and {@code kipam-operator check} read the IPAddresses: every one of the cluster,
 * page by page (a chunked LIST, all namespaces, of {@code pageSize} items and a continue token),
 * holding one page at a time. The first pass offers each address to the caller and counts the ones
 * that still hold their IP for {@link Duplicates}; {@link #duplicates} runs the second pass only
 * when the first found an address held more than once. One scan per audit or check.
 */
public final class AddressScan {

  private final KubernetesClient client;
  private final ClusterFacts facts;
  private final long pageSize;
  private final IntConsumer pageRead;
  private final Duplicates found = new Duplicates();

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
        });
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
                  new Duplicates.Holder(AddressObject.of(address), address.getSpec().getPool())));
    }
    return found.result();
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
      pageRead.accept(page.getItems().size());
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    return scanned;
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
