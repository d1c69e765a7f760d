package io.kipam.operator;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.math.BigInteger;
import java.util.Map;
import java.util.function.Supplier;

/**
 * kipam-operator's Prometheus metrics, in a registry of its own (two operators in one JVM, as in
 * tests, never share counters). JOSDK reports every reconcile and cleanup through {@link Metrics};
 * the reconcilers report pool counts and handshake outcomes.
 *
 * <ul>
 *   <li>{@code kipam_operator_reconciles_total{controller,operation,outcome}} and {@code
 *       kipam_operator_reconcile_duration_seconds{controller,operation}}: operation is {@code
 *       reconcile} or {@code cleanup}, outcome {@code success} or {@code error}.
 *   <li>{@code kipam_pool_capacity_addresses}, {@code kipam_pool_allocated_addresses}, {@code
 *       kipam_pool_available_addresses}, {@code kipam_pool_blocks}, by {@code pool}.
 *   <li>{@code kipam_block_releases_total{outcome}}: {@code requested}, {@code released}, {@code
 *       refused}, {@code cleared}, {@code blocked} (Ready but an IPAddress still exists), {@code
 *       node_gone} (a deleted Node's block removed).
 *   <li>{@code kipam_slot_conversions_total{outcome}}: {@code requested} (an Exclusive slot asked
 *       to become Shared).
 *   <li>{@code kipam_node_capacity_writes_total{outcome}}: writes of kipam's resources to a Node's
 *       status: {@code written}, {@code gone} (the Node was deleted or registered again), {@code
 *       failed}.
 *   <li>{@code kipam_operator_leader}: 1 while this instance holds the Lease.
 *   <li>{@code kipam_audit_duration_seconds}: how long one audit of the IPAddresses took
 *       (histogram); {@code kipam_audit_objects_scanned_total}: IPAddresses it read; {@code
 *       kipam_audit_restarts_total}: passes that started again after an expired continue token;
 *       {@code kipam_audit_orphans_seen_total}: orphan candidates seen, summed over audits; {@code
 *       kipam_audit_orphans_removed_total{reason}}: orphans it deleted, by reason ({@code pod},
 *       {@code block}, {@code node}); {@code kipam_audit_attachments_ended_total}: finalizers
 *       {@code kipam.io/attachment} it removed from IPAddresses whose Node is gone; {@code
 *       kipam_audit_duplicates}: addresses the latest audit found held by more than one IPAddress.
 * </ul>
 */
public final class OperatorMetrics implements Metrics {

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final Counter reconciles =
      Counter.builder()
          .name("kipam_operator_reconciles_total")
          .help("Reconciles and cleanups run, by controller, operation and outcome")
          .labelNames("controller", "operation", "outcome")
          .register(registry);
  private final Histogram durations =
      Histogram.builder()
          .name("kipam_operator_reconcile_duration_seconds")
          .help("Time one reconcile or cleanup took, by controller and operation")
          .labelNames("controller", "operation")
          .register(registry);
  private final Gauge capacity = poolGauge("capacity", "Assignable addresses of the pool");
  private final Gauge allocated = poolGauge("allocated", "Addresses allocated from the pool");
  private final Gauge available = poolGauge("available", "Addresses of the pool still available");
  private final Gauge blocks =
      Gauge.builder()
          .name("kipam_pool_blocks")
          .help("IPBlocks leased from the pool")
          .labelNames("pool")
          .register(registry);
  private final Counter capacityWrites =
      Counter.builder()
          .name("kipam_node_capacity_writes_total")
          .help("Writes of kipam's extended resources to Node status, by outcome")
          .labelNames("outcome")
          .register(registry);
  private final Counter releases =
      Counter.builder()
          .name("kipam_block_releases_total")
          .help("Block release decisions, by outcome")
          .labelNames("outcome")
          .register(registry);
  private final Counter conversions =
      Counter.builder()
          .name("kipam_slot_conversions_total")
          .help("Requests that an Exclusive slot become Shared, by outcome")
          .labelNames("outcome")
          .register(registry);
  private volatile Supplier<Map<String, Long>> demandingNodes = Map::of;

  {
    GaugeWithCallback.builder()
        .name("kipam_pool_demanding_nodes")
        .help("Nodes whose ADDs find no address of the pool they can reach (kipam.io/demand)")
        .labelNames("pool")
        .callback(cb -> demandingNodes.get().forEach((pool, n) -> cb.call(n, pool)))
        .register(registry);
  }

  private final Gauge leader =
      Gauge.builder()
          .name("kipam_operator_leader")
          .help("1 while this instance holds the leader Lease")
          .register(registry);

  private final Histogram auditDuration =
      Histogram.builder()
          .name("kipam_audit_duration_seconds")
          .help("Time one audit of the IPAddresses took")
          .register(registry);
  private final Counter auditScanned =
      Counter.builder()
          .name("kipam_audit_objects_scanned_total")
          .help("IPAddresses read by the audit")
          .register(registry);
  private final Counter auditRestarts =
      Counter.builder()
          .name("kipam_audit_restarts_total")
          .help("Passes of the audit that started again after an expired continue token (410)")
          .register(registry);
  private final Counter orphansSeen =
      Counter.builder()
          .name("kipam_audit_orphans_seen_total")
          .help(
              "Orphan candidates the audits saw, summed over audits (one seen by two audits counts"
                  + " twice)")
          .register(registry);
  private final Counter orphansRemoved =
      Counter.builder()
          .name("kipam_audit_orphans_removed_total")
          .help("Orphaned IPAddresses the audit deleted, by reason")
          .labelNames("reason")
          .register(registry);
  private final Counter attachmentsEnded =
      Counter.builder()
          .name("kipam_audit_attachments_ended_total")
          .help(
              "Finalizers kipam.io/attachment the audit removed from IPAddresses whose Node is gone")
          .register(registry);

  private final Gauge duplicates =
      Gauge.builder()
          .name("kipam_audit_duplicates")
          .help("Addresses the latest audit found held by more than one IPAddress")
          .register(registry);

  private Gauge poolGauge(String what, String help) {
    return Gauge.builder()
        .name("kipam_pool_" + what + "_addresses")
        .help(help)
        .labelNames("pool")
        .register(registry);
  }

  public PrometheusRegistry registry() {
    return registry;
  }

  @Override
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    long start = System.nanoTime();
    String controller = execution.controllerName();
    String operation = execution.name();
    try {
      T result = execution.execute();
      reconciles.labelValues(controller, operation, "success").inc();
      return result;
    } catch (Exception e) {
      reconciles.labelValues(controller, operation, "error").inc();
      throw e;
    } finally {
      durations.labelValues(controller, operation).observe((System.nanoTime() - start) / 1e9);
    }
  }

  @Override
  public <T extends Map<?, ?>> T monitorSizeOf(T map, String name) {
    return map;
  }

  @Override
  public void failedReconciliation(
      HasMetadata resource, Exception exception, Map<String, Object> metadata) {
    // Counted in timeControllerExecution.
  }

  /**
   * The current counts of {@code pool}; capacity and available as doubles (an IPv6 /64 holds 2^64).
   */
  public void pool(
      String pool, BigInteger capacity, long allocated, BigInteger available, int blocks) {
    this.capacity.labelValues(pool).set(capacity.doubleValue());
    this.allocated.labelValues(pool).set(allocated);
    this.available.labelValues(pool).set(available.doubleValue());
    this.blocks.labelValues(pool).set(blocks);
  }

  /** Drops the series of a pool that is gone. */
  public void forgetPool(String pool) {
    capacity.remove(pool);
    allocated.remove(pool);
    available.remove(pool);
    blocks.remove(pool);
  }

  /**
   * Where {@code kipam_pool_demanding_nodes{pool}} is read from at every scrape: how many Nodes
   * record demand for each pool ({@code kipam.io/demand}), so it falls to nothing as soon as the
   * demand is withdrawn.
   */
  public void demandFrom(Supplier<Map<String, Long>> demandingNodes) {
    this.demandingNodes = demandingNodes;
  }

  public void release(String outcome) {
    releases.labelValues(outcome).inc();
  }

  public void conversion(String outcome) {
    conversions.labelValues(outcome).inc();
  }

  public void nodeCapacityWrite(String outcome) {
    capacityWrites.labelValues(outcome).inc();
  }

  public void audited(double seconds) {
    auditDuration.observe(seconds);
  }

  public void scanned(int addresses) {
    auditScanned.inc(addresses);
  }

  public void auditRestarted(int times) {
    auditRestarts.inc(times);
  }

  public void orphansSeen(int candidates) {
    orphansSeen.inc(candidates);
  }

  public void orphanRemoved(String reason) {
    orphansRemoved.labelValues(reason).inc();
  }

  public void attachmentEnded() {
    attachmentsEnded.inc();
  }

  public void duplicates(int addresses) {
    duplicates.set(addresses);
  }

  public void leader(boolean leading) {
    leader.set(leading ? 1 : 0);
  }
}
