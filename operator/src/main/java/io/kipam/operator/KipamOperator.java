package io.kipam.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.kipam.operator.admission.AdmissionWebhook;
import io.kipam.operator.audit.Audit;
import io.kipam.operator.audit.AuditLoop;
import io.kipam.operator.audit.DuplicateSummary;
import io.kipam.operator.audit.Sightings;
import io.kipam.operator.block.BlockReconciler;
import io.kipam.operator.block.ClaimSweep;
import io.kipam.operator.capacity.CapacityPublisher;
import io.kipam.operator.check.CheckCommand;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.ControllerCaches;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.operator.pool.PoolReconciler;
import io.kipam.runtime.client.PreconditionedDelete;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam-operator: the IPPool and IPBlock controllers on java-operator-sdk, a Prometheus endpoint,
 * and leader election through a Lease, so that of several replicas exactly one acts. {@link #main}
 * runs it from the environment ({@link OperatorSettings}); {@link #start} runs the same wiring
 * inside another program, as the tests do, and {@link #close} stops it.
 *
 * <p>Every replica keeps its caches warm; only the Lease holder reconciles. A replica that loses
 * the Lease stops acting at once: {@code main} ends the process (the Deployment restarts it as a
 * standby), an embedded operator stops itself.
 */
public final class KipamOperator implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KipamOperator.class);

  private final OperatorSettings settings;
  private final OperatorMetrics metrics = new OperatorMetrics();
  private final WatchCount watches = new WatchCount();
  private KubernetesClient client;
  private KubernetesClient auditClient;
  private Operator operator;
  private MetricsServer http;
  private AdmissionWebhook webhook;
  private CapacityPublisher capacity;
  private AuditLoop audit;
  private AuditLoop claimSweep;
  private volatile boolean leading;
  private volatile boolean closing;

  private KipamOperator(OperatorSettings settings) {
    this.settings = settings;
  }

  /**
   * Without arguments, runs the operator; {@code check [options]} runs {@link CheckCommand} once
   * instead and exits with its code.
   */
  public static void main(String[] args) throws Exception {
    if (args.length > 0) {
      if (!"check".equals(args[0])) {
        System.err.println(
            "kipam-operator: unknown command " + args[0] + " (run without arguments, or: check)");
        System.exit(CheckCommand.FAILED);
        return;
      }
      System.exit(
          CheckCommand.run(
              List.of(args).subList(1, args.length), System.getenv(), System.out, System.err));
      return;
    }
    OperatorSettings settings;
    try {
      settings = OperatorSettings.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("kipam-operator: " + e.getMessage());
      System.exit(2);
      return;
    }
    KipamOperator operator = start(settings);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  operator.close();
                  stopped.countDown();
                },
                "kipam-operator-stop"));
    stopped.await();
  }

  /** Starts an operator with {@code settings}; it runs until {@link #close}. */
  public static KipamOperator start(OperatorSettings settings) throws Exception {
    KipamOperator started = new KipamOperator(settings);
    try {
      started.run();
    } catch (Exception | Error e) {
      started.close();
      throw e;
    }
    return started;
  }

  private void run() throws Exception {
    client = ApiClients.create(settings, watches);
    auditClient = ApiClients.forAudit(settings, watches);
    Clock clock = Clock.systemUTC();
    EventRecorder events =
        new EventRecorder(client, settings.eventNamespace(), settings.identity(), clock);
    AddressLookup addresses = new AddressLookup(client);
    PreconditionedDelete delete = new PreconditionedDelete(client);
    DuplicateSummary duplicates = new DuplicateSummary();
    ControllerCaches caches = new ControllerCaches();
    operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  .withMetrics(metrics)
                  .withCloseClientOnStop(false)
                  .checkingCRDAndValidateLocalModel(false)
                  .withConcurrentReconciliationThreads(settings.reconcileThreads())
                  .withReconciliationTerminationTimeout(Duration.ofSeconds(10));
              if (settings.leaderElection()) {
                o.withLeaderElectionConfiguration(leaderElection());
              }
            });
    operator.register(
        new PoolReconciler(
            clock,
            events,
            metrics,
            settings.recheckInterval(),
            addresses,
            delete,
            duplicates,
            caches),
        this::common);
    operator.register(
        new BlockReconciler(
            clock,
            settings.blockIdleDelay(),
            settings.releaseRetryDelay(),
            settings.recheckInterval(),
            settings.nodeGoneGrace(),
            client,
            addresses,
            delete,
            events,
            metrics,
            caches),
        this::common);
    audit =
        new AuditLoop(
            new Audit(
                auditClient,
                new PreconditionedDelete(auditClient),
                events,
                metrics,
                clock,
                new Sightings(settings.orphanGrace()),
                duplicates,
                settings.auditPageSize()),
            settings.auditInterval());
    claimSweep =
        new AuditLoop(
            new ClaimSweep(client, caches, delete, events),
            ClaimSweep.INTERVAL,
            "release of deleted IPAMClaims' addresses");
    if (settings.webhookPort() >= 0) {
      webhook = startWebhook(clock, caches);
    }
    http = new MetricsServer(settings.metricsPort(), metrics.registry(), this::ready);
    if (!settings.leaderElection()) {
      leading = true;
      metrics.leader(true);
    }
    operator.start();
    capacity =
        new CapacityPublisher(
            client, caches, settings.capacityInterval(), this::isLeader, metrics, clock);
    if (!settings.leaderElection()) {
      audit.start();
      claimSweep.start();
    }
    log.info(
        "kipam-operator {} started: metrics on port {}, webhook {}, leader election {}",
        settings.identity(),
        http.port(),
        webhook == null ? "off" : "on port " + webhook.port(),
        settings.leaderElection() ? "on (Lease " + settings.leaseName() + ")" : "off");
  }

  /**
   * The admission webhook, on every replica. A webhook that cannot start (no Secret can be written,
   * the port is taken) is logged and left out: the controllers do not depend on it, and
   * kube-apiserver applies the configuration's failurePolicy to the calls it cannot make.
   */
  private AdmissionWebhook startWebhook(Clock clock, ControllerCaches caches) {
    String namespace =
        settings
            .leaseNamespace()
            .orElseGet(() -> Optional.ofNullable(client.getNamespace()).orElse("default"));
    List<String> hosts =
        settings.webhookHosts().isEmpty()
            ? List.of("kipam-webhook." + namespace + ".svc")
            : settings.webhookHosts();
    try {
      return AdmissionWebhook.start(
          client,
          new AdmissionWebhook.Settings(
              settings.webhookPort(),
              namespace,
              settings.webhookSecret(),
              settings.webhookConfiguration(),
              hosts),
          clock,
          caches::block);
    } catch (Exception e) {
      log.error("the admission webhook does not run: {}", e.toString());
      return null;
    }
  }

  /** What both controllers share: a resync interval and retries that never give up for good. */
  private <R extends io.fabric8.kubernetes.api.model.HasMetadata> void common(
      ControllerConfigurationOverrider<R> controller) {
    controller
        .withReconciliationMaxInterval(settings.resyncInterval())
        .withRetry(
            new GenericRetry()
                .setInitialInterval(Duration.ofSeconds(1))
                .setIntervalMultiplier(2)
                .setMaxInterval(Duration.ofMinutes(1).toMillis())
                .withoutMaxAttempts());
  }

  private LeaderElectionConfiguration leaderElection() {
    Consumer<String> newLeader = id -> log.info("the leader is now {}", id);
    return new LeaderElectionConfiguration(
        settings.leaseName(),
        settings.leaseNamespace().orElse(null),
        settings.leaseDuration(),
        settings.renewDeadline(),
        settings.retryPeriod(),
        settings.identity(),
        new LeaderCallbacks(this::startedLeading, this::stoppedLeading, newLeader),
        // Losing the Lease is handled in stoppedLeading, which knows whether we are closing.
        false);
  }

  private void startedLeading() {
    leading = true;
    metrics.leader(true);
    log.info("{} holds the Lease {} and reconciles", settings.identity(), settings.leaseName());
    audit.start();
    claimSweep.start();
  }

  private void stoppedLeading() {
    leading = false;
    audit.close();
    claimSweep.close();
    metrics.leader(false);
    if (closing) {
      return;
    }
    if (settings.exitOnLostLeadership()) {
      log.error("{} lost the Lease {}; exiting", settings.identity(), settings.leaseName());
      System.exit(1);
    }
    log.error("{} lost the Lease {}; stopping", settings.identity(), settings.leaseName());
    Thread stop = new Thread(this::close, "kipam-operator-lost-lease");
    stop.setDaemon(true);
    stop.start();
  }

  /** Ready: started, and as leader with every informer healthy. A standby is ready too. */
  private boolean ready() {
    Operator o = operator;
    return o != null
        && !closing
        && o.getRuntimeInfo().isStarted()
        && (!leading || o.getRuntimeInfo().allEventSourcesAreHealthy());
  }

  /** Whether this instance currently holds the Lease (always, without leader election). */
  public boolean isLeader() {
    return leading;
  }

  /** The port serving {@code /metrics}, {@code /healthz} and {@code /readyz}. */
  public int metricsPort() {
    return http.port();
  }

  /**
   * The watches this operator's clients have opened, by resource ({@code nodes}, {@code
   * ippools.kipam.io}): right after the start, how many informers of each kind it runs.
   */
  public Map<String, Integer> watchesOpened() {
    return watches.opened();
  }

  /**
   * The reads at {@code resourceVersion=0} its clients have made, by resource: none, since every
   * informer lists with a page size (a consistent read).
   */
  public Map<String, Integer> staleableReads() {
    return watches.staleableReads();
  }

  public OperatorSettings settings() {
    return settings;
  }

  @Override
  public synchronized void close() {
    if (closing && operator == null) {
      return;
    }
    closing = true;
    try {
      if (audit != null) {
        audit.close();
      }
      if (claimSweep != null) {
        claimSweep.close();
      }
      if (operator != null) {
        operator.stop();
      }
    } catch (RuntimeException e) {
      log.warn("error while stopping the controllers: {}", e.toString());
    } finally {
      operator = null;
      if (capacity != null) {
        capacity.close();
      }
      if (http != null) {
        http.close();
      }
      if (webhook != null) {
        webhook.close();
      }
      if (client != null) {
        client.close();
      }
      if (auditClient != null) {
        auditClient.close();
      }
      leading = false;
      metrics.leader(false);
      log.info("kipam-operator {} stopped", settings.identity());
    }
  }
}
