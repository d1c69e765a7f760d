package io.kipam.operator;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * kipam-operator's settings, from its environment (the Deployment sets them). Every problem is
 * reported at once, naming the variable. See {@code docs/operator.md} for what each one means.
 *
 * @param kubeconfig {@code KUBECONFIG}; absent: the pod's service account (in-cluster)
 * @param metricsPort {@code KIPAM_METRICS_PORT} (8080): {@code /metrics}, {@code /healthz}, {@code
 *     /readyz}; 0 picks a free port
 * @param apiQps {@code KIPAM_API_QPS} (200): sustained API requests per second of the reconcilers
 *     and of {@code kipam.io/ip} on Nodes (watches excluded): 1,000 Nodes created at once get their
 *     value within seconds
 * @param apiBurst {@code KIPAM_API_BURST} (400): requests allowed at once above the sustained rate
 * @param requestTimeout {@code KIPAM_API_TIMEOUT_SECONDS} (15): one API request's deadline
 * @param reconcileThreads {@code KIPAM_RECONCILE_THREADS} (8): reconciles that run at once
 * @param blockIdleDelay {@code KIPAM_BLOCK_IDLE_SECONDS} (300): how long a block must have been
 *     empty before the operator asks its node for it back
 * @param releaseRetryDelay {@code KIPAM_RELEASE_RETRY_SECONDS} (60): how long a refused release
 *     stays on the block before the operator clears it, so a later round may ask again
 * @param recheckInterval {@code KIPAM_RECHECK_SECONDS} (30): how often a decision that waits for
 *     IPAddresses to go (a terminating pool, a block of a deleted node) looks again
 * @param nodeGoneGrace {@code KIPAM_NODE_GONE_GRACE_SECONDS} (60): how long a Node object must have
 *     been gone before the operator takes back a block of it that its daemon has not given back
 * @param capacityInterval {@code KIPAM_CAPACITY_SECONDS} (5): how often the leader brings kipam's
 *     extended resources ({@code kipam.io/ip}) on Nodes up to date; at most one write per Node per
 *     interval
 * @param resyncInterval {@code KIPAM_RESYNC_SECONDS} (300): every object is reconciled at least
 *     this often, even without events
 * @param leaderElection {@code KIPAM_LEADER_ELECTION} (true): only the holder of the Lease acts
 * @param leaseName {@code KIPAM_LEASE_NAME} (kipam-operator)
 * @param leaseNamespace {@code KIPAM_LEASE_NAMESPACE}, else {@code POD_NAMESPACE}, else the
 *     client's namespace
 * @param identity {@code POD_NAME}, else {@code HOSTNAME}, else a random UUID
 * @param leaseDuration {@code KIPAM_LEASE_DURATION_SECONDS} (15)
 * @param renewDeadline {@code KIPAM_LEASE_RENEW_DEADLINE_SECONDS} (10)
 * @param retryPeriod {@code KIPAM_LEASE_RETRY_PERIOD_SECONDS} (2)
 * @param eventNamespace {@code KIPAM_EVENT_NAMESPACE} (default): where Events about cluster-scoped
 *     objects (pools, blocks) are written, as the kubelet does for Nodes
 * @param auditInterval {@code KIPAM_AUDIT_SECONDS} (300): the pause between the end of one audit of
 *     the IPAddresses and the start of the next (leader only)
 * @param orphanGrace {@code KIPAM_ORPHAN_GRACE_SECONDS} (600): how long an IPAddress must have been
 *     seen orphaned, by two audits at least this far apart, before it is removed
 * @param auditPageSize {@code KIPAM_AUDIT_PAGE_SIZE} (500): IPAddresses per LIST page of the audit,
 *     the most it holds at once
 * @param auditQps {@code KIPAM_AUDIT_QPS} (20): the audit's own requests per second, on a client of
 *     its own, so it never takes the reconcilers' budget (design §6)
 * @param auditBurst {@code KIPAM_AUDIT_BURST} (40): the audit's requests at once above its rate
 * @param webhookPort -1 unless {@code KIPAM_WEBHOOK=true} (default false; config/webhook sets it):
 *     then {@code KIPAM_WEBHOOK_PORT} (9443), the HTTPS port of the admission webhook
 *     (docs/security.md), served by every replica; 0 picks a free port
 * @param webhookSecret {@code KIPAM_WEBHOOK_SECRET} (kipam-webhook-tls): the Secret of the
 *     webhook's serving certificate, in the Lease's namespace ({@code KIPAM_LEASE_NAMESPACE}, else
 *     {@code POD_NAMESPACE}); made when absent
 * @param webhookConfiguration {@code KIPAM_WEBHOOK_CONFIGURATION} (kipam-node-admission): the
 *     ValidatingWebhookConfiguration whose {@code caBundle} the operator keeps
 * @param webhookHosts {@code KIPAM_WEBHOOK_HOSTS}: comma-separated names (or addresses)
 *     kube-apiserver dials, for the certificate; default {@code kipam-webhook.<namespace>.svc}
 * @param exitOnLostLeadership not from the environment: {@link KipamOperator#main} exits the
 *     process when it loses the Lease, so no reconcile of the old leader overlaps the new one's; an
 *     operator run inside another program (tests) stops itself instead
 */
public record OperatorSettings(
    Optional<Path> kubeconfig,
    int metricsPort,
    double apiQps,
    int apiBurst,
    Duration requestTimeout,
    int reconcileThreads,
    Duration blockIdleDelay,
    Duration releaseRetryDelay,
    Duration recheckInterval,
    Duration nodeGoneGrace,
    Duration capacityInterval,
    Duration resyncInterval,
    boolean leaderElection,
    String leaseName,
    Optional<String> leaseNamespace,
    String identity,
    Duration leaseDuration,
    Duration renewDeadline,
    Duration retryPeriod,
    String eventNamespace,
    Duration auditInterval,
    Duration orphanGrace,
    int auditPageSize,
    double auditQps,
    int auditBurst,
    int webhookPort,
    String webhookSecret,
    String webhookConfiguration,
    List<String> webhookHosts,
    boolean exitOnLostLeadership) {

  public static OperatorSettings fromEnvironment(Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    Reader read = new Reader(env, problems);
    int port = (int) read.number("KIPAM_METRICS_PORT", 8080, 0, 65535);
    double qps = read.number("KIPAM_API_QPS", 200, 1, 100_000);
    int burst = (int) read.number("KIPAM_API_BURST", 400, 1, 100_000);
    double auditQps = read.number("KIPAM_AUDIT_QPS", 20, 1, 100_000);
    int auditBurst = (int) read.number("KIPAM_AUDIT_BURST", 40, 1, 100_000);
    Duration timeout = read.seconds("KIPAM_API_TIMEOUT_SECONDS", 15, 1);
    int threads = (int) read.number("KIPAM_RECONCILE_THREADS", 8, 1, 1000);
    Duration idle = read.seconds("KIPAM_BLOCK_IDLE_SECONDS", 300, 0);
    Duration retry = read.seconds("KIPAM_RELEASE_RETRY_SECONDS", 60, 0);
    Duration recheck = read.seconds("KIPAM_RECHECK_SECONDS", 30, 1);
    Duration nodeGoneGrace = read.seconds("KIPAM_NODE_GONE_GRACE_SECONDS", 60, 0);
    Duration capacity = read.seconds("KIPAM_CAPACITY_SECONDS", 5, 1);
    Duration resync = read.seconds("KIPAM_RESYNC_SECONDS", 300, 1);
    boolean election = read.bool("KIPAM_LEADER_ELECTION", true);
    Duration lease = read.seconds("KIPAM_LEASE_DURATION_SECONDS", 15, 1);
    Duration renew = read.seconds("KIPAM_LEASE_RENEW_DEADLINE_SECONDS", 10, 1);
    Duration retryPeriod = read.seconds("KIPAM_LEASE_RETRY_PERIOD_SECONDS", 2, 1);
    Duration audit = read.seconds("KIPAM_AUDIT_SECONDS", 300, 1);
    Duration orphanGrace = read.seconds("KIPAM_ORPHAN_GRACE_SECONDS", 600, 0);
    int auditPage = (int) read.number("KIPAM_AUDIT_PAGE_SIZE", 500, 1, 10_000);
    int webhookPort =
        read.bool("KIPAM_WEBHOOK", false)
            ? (int) read.number("KIPAM_WEBHOOK_PORT", 9443, 0, 65535)
            : -1;
    List<String> webhookHosts =
        read.text("KIPAM_WEBHOOK_HOSTS").stream()
            .flatMap(h -> java.util.Arrays.stream(h.split(",")))
            .map(String::trim)
            .filter(h -> !h.isEmpty())
            .toList();
    if (renew.compareTo(lease) >= 0) {
      problems.add(
          "KIPAM_LEASE_RENEW_DEADLINE_SECONDS must be shorter than KIPAM_LEASE_DURATION_SECONDS");
    }
    if (retryPeriod.compareTo(renew) >= 0) {
      problems.add(
          "KIPAM_LEASE_RETRY_PERIOD_SECONDS must be shorter than"
              + " KIPAM_LEASE_RENEW_DEADLINE_SECONDS");
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return new OperatorSettings(
        read.text("KUBECONFIG").map(Path::of),
        port,
        qps,
        burst,
        timeout,
        threads,
        idle,
        retry,
        recheck,
        nodeGoneGrace,
        capacity,
        resync,
        election,
        read.text("KIPAM_LEASE_NAME").orElse("kipam-operator"),
        read.text("KIPAM_LEASE_NAMESPACE").or(() -> read.text("POD_NAMESPACE")),
        read.text("POD_NAME")
            .or(() -> read.text("HOSTNAME"))
            .orElseGet(() -> UUID.randomUUID().toString()),
        lease,
        renew,
        retryPeriod,
        read.text("KIPAM_EVENT_NAMESPACE").orElse("default"),
        audit,
        orphanGrace,
        auditPage,
        auditQps,
        auditBurst,
        webhookPort,
        read.text("KIPAM_WEBHOOK_SECRET").orElse("kipam-webhook-tls"),
        read.text("KIPAM_WEBHOOK_CONFIGURATION").orElse("kipam-node-admission"),
        webhookHosts,
        true);
  }

  /** The same settings for an operator that must not end its process when it loses the Lease. */
  public OperatorSettings embedded() {
    return new OperatorSettings(
        kubeconfig,
        metricsPort,
        apiQps,
        apiBurst,
        requestTimeout,
        reconcileThreads,
        blockIdleDelay,
        releaseRetryDelay,
        recheckInterval,
        nodeGoneGrace,
        capacityInterval,
        resyncInterval,
        leaderElection,
        leaseName,
        leaseNamespace,
        identity,
        leaseDuration,
        renewDeadline,
        retryPeriod,
        eventNamespace,
        auditInterval,
        orphanGrace,
        auditPageSize,
        auditQps,
        auditBurst,
        webhookPort,
        webhookSecret,
        webhookConfiguration,
        webhookHosts,
        false);
  }

  private record Reader(Map<String, String> env, List<String> problems) {

    Optional<String> text(String name) {
      return Optional.ofNullable(env.get(name)).map(String::trim).filter(s -> !s.isEmpty());
    }

    double number(String name, double fallback, double min, double max) {
      Optional<String> text = text(name);
      if (text.isEmpty()) {
        return fallback;
      }
      try {
        double value = Double.parseDouble(text.get());
        if (value >= min && value <= max) {
          return value;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problems.add(
          name + " must be a number from " + fmt(min) + " to " + fmt(max) + ", not " + text.get());
      return fallback;
    }

    Duration seconds(String name, long fallback, long min) {
      Optional<String> text = text(name);
      if (text.isEmpty()) {
        return Duration.ofSeconds(fallback);
      }
      try {
        long value = Long.parseLong(text.get());
        if (value >= min) {
          return Duration.ofSeconds(value);
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problems.add(
          name + " must be a whole number of seconds, at least " + min + ", not " + text.get());
      return Duration.ofSeconds(fallback);
    }

    boolean bool(String name, boolean fallback) {
      Optional<String> text = text(name);
      if (text.isEmpty()) {
        return fallback;
      }
      return switch (text.get()) {
        case "true" -> true;
        case "false" -> false;
        default -> {
          problems.add(name + " must be true or false, not " + text.get());
          yield fallback;
        }
      };
    }

    private static String fmt(double d) {
      return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
  }
}
