package io.kipam.operator;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;

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
final class ApiClients {

  private ApiClients() {}

  static KubernetesClient create(OperatorSettings settings) throws IOException {
    Config config =
        settings.kubeconfig().isPresent()
            ? Config.fromKubeconfig(Files.readString(settings.kubeconfig().get()))
            : Config.autoConfigure(null);
    config.setRequestTimeout((int) settings.requestTimeout().toMillis());
    config.setConnectionTimeout(5_000);
    config.setRequestRetryBackoffLimit(3);
    ApiRateLimiter limiter = new ApiRateLimiter(settings.apiQps(), settings.apiBurst());
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor(ApiRateLimiter.NAME, limiter))
        .build();
  }
}
