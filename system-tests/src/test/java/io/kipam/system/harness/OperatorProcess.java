package io.kipam.system.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.operator.KipamOperator;
import io.kipam.testing.Fixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * kipam-operator running as its own JVM, as its Deployment runs it, so node tests see pools and
 * blocks handled by the real operator and can SIGKILL it. Its environment is what {@code
 * RunningOperator} gives an operator in the operator's own tests: the given kubeconfig, a free
 * metrics port, a Lease of its own in {@code default} with short durations; {@link #withEnv}
 * overrides. Leadership is read from the API, never from the log: the operator leads when the
 * Lease's holder is its {@code POD_NAME}.
 */
public final class OperatorProcess extends JvmProcess<OperatorProcess> {

  private final KubernetesClient client;
  private final Path kubeconfig;
  private final String leaseName = Fixtures.uniqueName("kipam-operator");
  private final String podName;

  public OperatorProcess(Path dir, Path kubeconfig, KubernetesClient client) {
    this(dir, Fixtures.uniqueName("operator"), kubeconfig, client);
  }

  private OperatorProcess(Path dir, String podName, Path kubeconfig, KubernetesClient client) {
    super(dir.resolve(podName + ".log"));
    this.podName = podName;
    this.kubeconfig = kubeconfig;
    this.client = client;
  }

  /**
   * {@code target/operator.classpath} (see the module's pom): kipam-operator's jar and its
   * dependencies, without this module's classes.
   */
  @Override
  public String classpath() throws IOException {
    return Files.readString(Path.of("target", "operator.classpath")).trim();
  }

  /** The client compiler only, as the operator's image runs it (images/operator/pom.xml). */
  @Override
  public List<String> jvmOptions() {
    return List.of("-XX:TieredStopAtLevel=1");
  }

  @Override
  public String mainClass() {
    return KipamOperator.class.getName();
  }

  @Override
  public Map<String, String> environment() {
    return Map.ofEntries(
        Map.entry("KUBECONFIG", kubeconfig.toString()),
        Map.entry("KIPAM_METRICS_PORT", "0"),
        Map.entry("KIPAM_LEASE_NAMESPACE", "default"),
        Map.entry("KIPAM_LEASE_NAME", leaseName),
        Map.entry("POD_NAME", podName),
        Map.entry("KIPAM_LEASE_DURATION_SECONDS", "4"),
        Map.entry("KIPAM_LEASE_RENEW_DEADLINE_SECONDS", "3"),
        Map.entry("KIPAM_LEASE_RETRY_PERIOD_SECONDS", "1"),
        Map.entry("KIPAM_RECHECK_SECONDS", "1"));
  }

  /** kipam-operator's settings at its next start, its defaults where nothing sets them. */
  public io.kipam.operator.OperatorSettings settings() {
    return io.kipam.operator.OperatorSettings.fromEnvironment(settingsEnvironment());
  }

  /**
   * At its next start the operator serves {@code /metrics} on a free loopback port (by default it
   * picks one itself and tests cannot find it), for {@link #metric}.
   */
  public OperatorProcess withMetricsPort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return withEnv("KIPAM_METRICS_PORT", Integer.toString(socket.getLocalPort()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The sum of every sample of {@code name} (over all its labels) on the running operator's {@code
   * /metrics}; needs {@link #withMetricsPort}.
   */
  public double metric(String name) throws IOException, InterruptedException {
    String port = env("KIPAM_METRICS_PORT");
    if ("0".equals(port)) {
      throw new IllegalStateException("start the operator withMetricsPort() to read " + name);
    }
    String body =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(body);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(2));
    }
    return sum;
  }

  /** The operator's identity at its next (or last) start: the Lease holder it writes. */
  public String identity() {
    return env("POD_NAME");
  }

  /** The Lease this operator competes for; null before any instance has taken it. */
  public Lease lease() {
    return client
        .resources(Lease.class)
        .inNamespace(env("KIPAM_LEASE_NAMESPACE"))
        .withName(env("KIPAM_LEASE_NAME"))
        .get();
  }

  /** Starts the operator again after {@link #kill} or {@link #close}, with the current env. */
  public OperatorProcess restart() throws InterruptedException {
    if (alive()) {
      close();
    }
    return start();
  }

  /** Starts the operator with {@code env} added to its environment and waits until it leads. */
  public OperatorProcess startLeading(Map<String, String> env, Duration timeout) {
    env.forEach(this::withEnv);
    start();
    awaitLeader(timeout);
    return this;
  }

  /** Waits until this operator holds its Lease, and returns the Lease as it was then. */
  public Lease awaitLeader(Duration timeout) {
    AtomicReference<Lease> held = new AtomicReference<>();
    await()
        .atMost(timeout)
        .untilAsserted(
            () -> {
              assertThat(alive()).as("kipam-operator running; its log: %s", log).isTrue();
              Lease lease = lease();
              assertThat(lease)
                  .as("Lease %s held by %s; operator log: %s", leaseName, identity(), log)
                  .isNotNull();
              assertThat(lease.getSpec().getHolderIdentity())
                  .as("holder of Lease %s; operator log: %s", leaseName, log)
                  .isEqualTo(identity());
              held.set(lease);
            });
    return held.get();
  }
}
