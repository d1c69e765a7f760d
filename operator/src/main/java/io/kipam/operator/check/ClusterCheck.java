package io.kipam.operator.check;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PoolGeometry;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.audit.AddressObject;
import io.kipam.operator.audit.AddressScan;
import io.kipam.operator.audit.ClusterFacts;
import io.kipam.operator.audit.Duplicates;
import io.kipam.operator.audit.OrphanRules;
import io.kipam.operator.check.CheckReport.Problem;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The audit's reading of the cluster, once and read-only, for {@code kipam-operator check}: the
 * same pages of IPAddresses ({@link AddressScan}), the same orphan rules on the same consistent
 * reads ({@link OrphanRules}, {@link ClusterFacts}) and the same duplicate search, but nothing is
 * deleted, no Event and no status is written, and there is no grace period: an orphan is reported
 * as a candidate the operator removes if it stays orphaned. On top, per pool, its capacity and
 * allocated addresses, and blocks that do not move on by themselves.
 */
public final class ClusterCheck {

  /** How long a block may be being deleted, or wait for its release answer, before it is stuck. */
  static final Duration STUCK_AFTER = Duration.ofMinutes(10);

  private final KubernetesClient client;
  private final Clock clock;
  private final int pageSize;

  public ClusterCheck(KubernetesClient client, Clock clock, int pageSize) {
    this.client = client;
    this.clock = clock;
    this.pageSize = pageSize;
  }

  /**
   * Checks the pools named in {@code only} (every pool when empty).
   *
   * @throws IllegalArgumentException when a pool of {@code only} does not exist
   */
  public CheckReport run(Set<String> only) {
    Instant now = clock.instant();
    Map<String, IPPool> pools = new TreeMap<>();
    for (IPPool pool : client.resources(IPPool.class).list().getItems()) {
      pools.put(pool.getMetadata().getName(), pool);
    }
    for (String name : only) {
      if (!pools.containsKey(name)) {
        throw new IllegalArgumentException("IPPool " + name + " does not exist");
      }
    }
    Predicate<String> wanted = pool -> only.isEmpty() || only.contains(pool);
    ClusterFacts facts = ClusterFacts.forCheck(client);
    Map<String, Long> allocated = new HashMap<>();
    List<Problem> problems = new ArrayList<>();
    AddressScan scan = new AddressScan(client, facts, pageSize, n -> {});
    int read =
        scan.firstPass(
            address -> {
              String label = labelledPool(address);
              if (label != null) {
                allocated.merge(label, 1L, Long::sum);
              }
              String pool = address.getSpec().getPool();
              if (wanted.test(pool)) {
                if (!pools.containsKey(pool)) {
                  problems.add(
                      new CheckReport.UnknownPool(
                          pool, AddressObject.of(address).toString(), address.getSpec().getIp()));
                } else {
                  OrphanRules.classify(address, facts)
                      .ifPresent(
                          v ->
                              problems.add(
                                  new CheckReport.Orphan(
                                      pool,
                                      AddressObject.of(address).toString(),
                                      address.getMetadata().getUid(),
                                      address.getSpec().getIp(),
                                      v.reason().label(),
                                      v.detail())));
                }
              }
              // Nothing is removed: every address still holds its IP.
              return false;
            });
    scan.duplicates().entrySet().stream()
        .filter(e -> e.getValue().stream().map(Duplicates.Holder::pool).anyMatch(wanted))
        .map(e -> duplicate(e.getKey(), e.getValue()))
        .sorted(Comparator.comparing(CheckReport.Duplicate::ip))
        .forEach(problems::add);
    List<IPBlock> blocks = blocks();
    for (IPBlock block : blocks) {
      if (block.getSpec() != null && wanted.test(block.getSpec().getPool())) {
        stuck(block, facts, now).ifPresent(problems::add);
      }
    }
    List<CheckReport.PoolRow> rows = new ArrayList<>();
    pools.forEach(
        (name, pool) -> {
          if (wanted.test(name)) {
            rows.add(row(pool, allocated.getOrDefault(name, 0L), problems));
          }
        });
    return new CheckReport(read, blocks.size(), rows, problems);
  }

  private static String labelledPool(IPAddress address) {
    Map<String, String> labels = address.getMetadata().getLabels();
    return labels == null ? null : labels.get(ApiConstants.LABEL_POOL);
  }

  private static CheckReport.Duplicate duplicate(
      Duplicates.Slot slot, List<Duplicates.Holder> holders) {
    return new CheckReport.Duplicate(
        slot.network(),
        slot.ip(),
        holders.stream()
            .map(h -> new CheckReport.Holder(h.address().toString(), h.pool()))
            .sorted(Comparator.comparing(CheckReport.Holder::address))
            .toList());
  }

  /** Every IPBlock, page by page as the addresses are read. */
  private List<IPBlock> blocks() {
    List<IPBlock> blocks = new ArrayList<>();
    String next = null;
    do {
      KubernetesResourceList<IPBlock> page =
          client
              .resources(IPBlock.class)
              .list(new ListOptionsBuilder().withLimit((long) pageSize).withContinue(next).build());
      blocks.addAll(page.getItems());
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    return blocks;
  }

  /** Why {@code block} is stuck, every reason; empty when it is not. */
  static Optional<Problem> stuck(IPBlock block, OrphanRules.Facts facts, Instant now) {
    List<String> reasons = new ArrayList<>();
    String node = block.getSpec().getNode();
    if (node != null && !node.isEmpty() && !facts.nodeExists(node)) {
      reasons.add("its Node " + node + " does not exist");
    }
    Optional<Instant> deleting = instant(block.getMetadata().getDeletionTimestamp());
    if (deleting.isPresent() && deleting.get().plus(STUCK_AFTER).isBefore(now)) {
      reasons.add("being deleted since " + deleting.get() + " (over 10 minutes)");
    }
    if (block.getStatus() != null
        && block.getStatus().getRelease() != null
        && block.getStatus().getRelease().getState() == ReleaseState.Requested) {
      Optional<Instant> asked = instant(block.getStatus().getRelease().getRequestedAt());
      if (asked.isPresent() && asked.get().plus(STUCK_AFTER).isBefore(now)) {
        reasons.add("release requested at " + asked.get() + ", unanswered for over 10 minutes");
      }
    }
    if (reasons.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new CheckReport.StuckBlock(
            block.getSpec().getPool(),
            block.getMetadata().getName(),
            node == null ? "" : node,
            String.join("; ", reasons)));
  }

  private static Optional<Instant> instant(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(text));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static CheckReport.PoolRow row(IPPool pool, long allocated, List<Problem> problems) {
    String name = pool.getMetadata().getName();
    String network = pool.getSpec() == null ? null : pool.getSpec().getNetwork();
    int orphans = 0;
    int duplicates = 0;
    int stuck = 0;
    for (Problem problem : problems) {
      if (problem instanceof CheckReport.Orphan o && o.pool().equals(name)) {
        orphans++;
      } else if (problem instanceof CheckReport.Duplicate d
          && d.holders().stream().anyMatch(h -> h.pool().equals(name))) {
        duplicates++;
      } else if (problem instanceof CheckReport.StuckBlock s && name.equals(s.pool())) {
        stuck++;
      }
    }
    return new CheckReport.PoolRow(
        name,
        network == null ? "" : network,
        capacity(pool),
        allocated,
        orphans,
        duplicates,
        stuck);
  }

  private static String capacity(IPPool pool) {
    if (pool.getStatus() != null && pool.getStatus().getCapacity() != null) {
      return pool.getStatus().getCapacity();
    }
    try {
      return PoolGeometry.of(pool.getSpec()).assignableCount().toString();
    } catch (IllegalArgumentException e) {
      return "invalid";
    }
  }
}
