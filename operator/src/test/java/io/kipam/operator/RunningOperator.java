package io.kipam.operator;

import static org.awaitility.Awaitility.await;

import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.ProductDefaults;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * kipam-operator started in the test JVM with the wiring {@code main} uses, from an environment as
 * the Deployment would give it: the administrator's kubeconfig, a free metrics port, a Lease of its
 * own in {@code default}, short handshake delays and a rare audit. Tests override what they
 * exercise.
 */
final class RunningOperator implements AutoCloseable {

  private final KipamOperator operator;

  private RunningOperator(KipamOperator operator) {
    this.operator = operator;
  }

  /** The environment of one operator instance; a fresh Lease name unless the caller sets one. */
  static Map<String, String> environment(ControlPlane controlPlane) {
    Map<String, String> env = new HashMap<>();
    env.put("KUBECONFIG", controlPlane.adminKubeconfig().toString());
    env.put("KIPAM_METRICS_PORT", "0");
    env.put("KIPAM_LEASE_NAMESPACE", "default");
    env.put("KIPAM_LEASE_NAME", Fixtures.uniqueName("kipam-operator"));
    env.put("POD_NAME", Fixtures.uniqueName("operator"));
    env.put("KIPAM_LEASE_DURATION_SECONDS", "4");
    env.put("KIPAM_LEASE_RENEW_DEADLINE_SECONDS", "3");
    env.put("KIPAM_LEASE_RETRY_PERIOD_SECONDS", "1");
    env.put("KIPAM_RECHECK_SECONDS", "1");
    env.put("KIPAM_NODE_GONE_GRACE_SECONDS", "2");
    env.put("KIPAM_BLOCK_IDLE_SECONDS", "3600");
    env.put("KIPAM_RELEASE_RETRY_SECONDS", "3600");
    // Kipam.allocate writes addresses of pods that do not exist: orphans to the audit. Tests of
    // other things keep them for as long as they need; the audit's own tests set short values.
    env.put("KIPAM_AUDIT_SECONDS", "3600");
    return env;
  }

  static RunningOperator start(Map<String, String> env) throws Exception {
    return new RunningOperator(
        KipamOperator.start(OperatorSettings.fromEnvironment(env).embedded()));
  }

  /**
   * An operator with {@code overrides} over {@link #environment}; a setting mapped to {@code null}
   * is left out, so the operator runs at its default ({@code ProductDefaults}).
   */
  static RunningOperator start(ControlPlane controlPlane, Map<String, String> overrides)
      throws Exception {
    return start(environment(controlPlane, overrides));
  }

  /** The settings such an operator runs with. */
  static OperatorSettings settings(ControlPlane controlPlane, Map<String, String> overrides) {
    return OperatorSettings.fromEnvironment(environment(controlPlane, overrides));
  }

  private static Map<String, String> environment(
      ControlPlane controlPlane, Map<String, String> overrides) {
    Map<String, String> env = environment(controlPlane);
    ProductDefaults.overlay(env, overrides);
    return env;
  }

  KipamOperator operator() {
    return operator;
  }

  boolean isLeader() {
    return operator.isLeader();
  }

  /** GET on the operator's HTTP port: status code and body. */
  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + operator.metricsPort() + path))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The value of one sample of {@code /metrics}, e.g. {@code
   * kipam_pool_available_addresses{pool="a"}}; 0 when the sample is absent.
   */
  double metric(String sample) throws IOException, InterruptedException {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(sample) + " (\\S+)$")
            .matcher(get("/metrics").body());
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  /** The sum of every sample of metric {@code name} (all label values). */
  double metricSum(String name) throws IOException, InterruptedException {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$")
            .matcher(get("/metrics").body());
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(2));
    }
    return sum;
  }

  /** Waits until {@code count} more audits than now have finished. */
  void awaitMoreAudits(int count, Duration within) throws IOException, InterruptedException {
    double audits = metric("kipam_audit_duration_seconds_count");
    await()
        .atMost(within)
        .until(() -> metric("kipam_audit_duration_seconds_count") >= audits + count);
  }

  @Override
  public void close() {
    operator.close();
  }
}
