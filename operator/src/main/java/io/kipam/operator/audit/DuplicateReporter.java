package io.kipam.operator.audit;

import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.EventRecorder;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports addresses held more than once (design §4 rule 7): never deletes anything. Each duplicate
 * gets a Warning Event {@code DuplicateAddress} on every holder and on each pool they name, when an
 * audit first finds it (not again on every audit while it lasts); the gauge {@code
 * kipam_audit_duplicates} counts the addresses held more than once; and {@link DuplicateSummary}
 * tells the pool reconciler what to say in the pool's condition {@code DuplicateAddresses}.
 */
final class DuplicateReporter {

  private static final Logger log = LoggerFactory.getLogger(DuplicateReporter.class);
  private static final int NAMED = 10;

  private final EventRecorder events;
  private final OperatorMetrics metrics;
  private final DuplicateSummary summary;
  private Set<Set<AddressObject>> reported = Set.of();

  DuplicateReporter(EventRecorder events, OperatorMetrics metrics, DuplicateSummary summary) {
    this.events = events;
    this.metrics = metrics;
    this.summary = summary;
  }

  void report(Map<Duplicates.Slot, List<Duplicates.Holder>> duplicates, ClusterFacts facts) {
    metrics.duplicates(duplicates.size());
    Map<String, Set<String>> byPool = new TreeMap<>();
    Set<Set<AddressObject>> now = new HashSet<>();
    duplicates.forEach(
        (slot, holders) -> {
          String sentence = sentence(slot, holders);
          Set<AddressObject> keys =
              holders.stream().map(Duplicates.Holder::address).collect(Collectors.toSet());
          now.add(keys);
          holders.forEach(
              h -> byPool.computeIfAbsent(h.pool(), p -> new TreeSet<>()).add(sentence));
          if (!reported.contains(keys)) {
            announce(holders, sentence, facts);
          }
        });
    reported = now;
    Map<String, String> messages = new TreeMap<>();
    byPool.forEach((pool, sentences) -> messages.put(pool, message(sentences)));
    summary.replace(messages);
  }

  private void announce(List<Duplicates.Holder> holders, String sentence, ClusterFacts facts) {
    log.warn("duplicate address: {}", sentence);
    for (Duplicates.Holder holder : holders) {
      IPAddress object = new IPAddress();
      object.setMetadata(
          new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
              .withNamespace(holder.address().namespace())
              .withName(holder.address().name())
              .withUid(holder.address().uid())
              .build());
      events.record(object, EventRecorder.Type.Warning, "DuplicateAddress", sentence);
    }
    holders.stream()
        .map(Duplicates.Holder::pool)
        .distinct()
        .forEach(
            pool ->
                facts
                    .pool(pool)
                    .ifPresent(
                        (IPPool p) ->
                            events.record(
                                p, EventRecorder.Type.Warning, "DuplicateAddress", sentence)));
  }

  /**
   * The first {@value #NAMED} sentences, so a pool with many duplicates keeps a short condition.
   */
  static String message(Set<String> sentences) {
    String named = sentences.stream().limit(NAMED).collect(Collectors.joining("; "));
    int more = sentences.size() - NAMED;
    return more > 0 ? named + "; and " + more + " more addresses held twice" : named;
  }

  /** E.g. "10.0.0.1 is held by a/pool.10-0-0-1 (pool p) and b/pool.10-0-0-1 (pool p)". */
  static String sentence(Duplicates.Slot slot, List<Duplicates.Holder> holders) {
    return slot.ip()
        + " is held by "
        + holders.stream()
            .map(h -> h.address() + " (pool " + h.pool() + ")")
            .sorted()
            .collect(Collectors.joining(" and "));
  }
}
