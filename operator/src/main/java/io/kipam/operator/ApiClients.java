package io.kipam.operator;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The operator's Kubernetes client, with its limits chosen rather than inherited:
 *
 * <ul>
 *   <li>QPS and burst from the settings ({@link ApiRateLimiter}; fabric8 has no limiter of its
 *       own),
 *   <li>a request timeout from the settings (15 s: a chunked LIST page or a status write that takes
 *       longer is better retried by the next reconcile than waited for),
 *   <li>a 5 s connect timeout, and at most 3 client-side retries of a request that met a 5xx or a
 *       broken connection (fabric8 retries 10 times by default, which would keep a reconcile thread
 *       for over a minute while the API server restarts; JOSDK's own retry with back-off takes over
 *       instead).
 * </ul>
 *
 * Every write the operator makes is safe to repeat: status writes carry a resourceVersion, deletes
 * a UID, and a repeated delete meets 404, which counts as done.
 */
public final class ApiClients {

  private ApiClients() {}

  /** The operator's client; the watches it opens are counted in {@code watches}. */
  static KubernetesClient create(OperatorSettings settings, WatchCount watches) throws IOException {
    return create(
        settings.kubeconfig(),
        settings.apiQps(),
        settings.apiBurst(),
        settings.requestTimeout(),
        Optional.of(watches));
  }

  /** The audit's own client: its budget ({@code KIPAM_AUDIT_QPS}) never slows a reconcile. */
  static KubernetesClient forAudit(OperatorSettings settings, WatchCount watches)
      throws IOException {
    return create(
        settings.kubeconfig(),
        settings.auditQps(),
        settings.auditBurst(),
        settings.requestTimeout(),
        Optional.of(watches));
  }

  /**
   * A client from the kubeconfig at {@code kubeconfig}, else fabric8's own resolution (in-cluster
   * service account, {@code ~/.kube/config}).
   */
  public static KubernetesClient create(
      Optional<Path> kubeconfig, double qps, int burst, Duration requestTimeout)
      throws IOException {
    return create(kubeconfig, qps, burst, requestTimeout, Optional.empty());
  }

  private static KubernetesClient create(
      Optional<Path> kubeconfig,
      double qps,
      int burst,
      Duration requestTimeout,
      Optional<WatchCount> watches)
      throws IOException {
    Config config =
        kubeconfig.isPresent()
            ? Config.fromKubeconfig(Files.readString(kubeconfig.get()))
            : Config.autoConfigure(null);
    config.setRequestTimeout((int) requestTimeout.toMillis());
    config.setConnectionTimeout(5_000);
    config.setRequestRetryBackoffLimit(3);
    ApiRateLimiter limiter = new ApiRateLimiter(qps, burst);
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientBuilderConsumer(
            b -> {
              b.addOrReplaceInterceptor(ApiRateLimiter.NAME, limiter);
              watches.ifPresent(w -> b.addOrReplaceInterceptor(WatchCount.NAME, w));
            })
        .build();
  }
}
