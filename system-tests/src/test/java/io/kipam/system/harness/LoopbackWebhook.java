package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.function.IntFunction;
import org.awaitility.Awaitility;

/**
 * kipam's admission webhook as config/webhook/webhook.yaml installs it (its Service, configuration
 * and RBAC), on a control plane that runs on this host: the configuration's clientConfig becomes
 * {@code https://127.0.0.1:<port>/validate}, the port of a kipam-operator process started with
 * {@link #operatorEnv}.
 */
public final class LoopbackWebhook {

  public static final String CONFIGURATION = "kipam-node-admission";

  /** The port kipam-operator serves the webhook on. */
  public final int port;

  private LoopbackWebhook(int port) {
    this.port = port;
  }

  /** Applies webhook.yaml and points its webhooks at a free loopback port. */
  public static LoopbackWebhook install(ControlPlane controlPlane, KubernetesClient client) {
    controlPlane.kubectl(
        "apply",
        "-f",
        ControlPlaneBinaries.repositoryRoot().resolve("config/webhook/webhook.yaml").toString());
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String url = "https://127.0.0.1:" + port + "/validate";
    replaceInEach(
        controlPlane,
        configuration(client).getWebhooks().size(),
        "clientConfig",
        i -> "{\"url\":\"" + url + "\"}");
    return new LoopbackWebhook(port);
  }

  /**
   * Replaces {@code path} (below {@code /webhooks/<i>/}) in each of the configuration's {@code
   * webhooks} webhooks with the JSON {@code value} gives for it, in one JSON patch.
   */
  public static void replaceInEach(
      ControlPlane controlPlane, int webhooks, String path, IntFunction<String> value) {
    StringBuilder patch = new StringBuilder("[");
    for (int i = 0; i < webhooks; i++) {
      patch
          .append(i == 0 ? "" : ",")
          .append("{\"op\":\"replace\",\"path\":\"/webhooks/")
          .append(i)
          .append('/')
          .append(path)
          .append("\",\"value\":")
          .append(value.apply(i))
          .append('}');
    }
    controlPlane.kubectl(
        "patch",
        "validatingwebhookconfiguration",
        CONFIGURATION,
        "--type=json",
        "-p",
        patch.append(']').toString());
  }

  /** The settings that make {@code operator} serve this webhook, its Secret in kipam-system. */
  public OperatorProcess operatorEnv(OperatorProcess operator) {
    return operator
        .withEnv("POD_NAMESPACE", InstalledIdentities.NAMESPACE)
        .withEnv("KIPAM_WEBHOOK", "true")
        .withEnv("KIPAM_WEBHOOK_PORT", Integer.toString(port))
        .withEnv("KIPAM_WEBHOOK_HOSTS", "127.0.0.1");
  }

  /** Waits until kipam-operator has written its CA bundle into every webhook. */
  public void awaitCaBundle(KubernetesClient client, Duration within) {
    Awaitility.await("kipam-operator writes the webhook's CA bundle")
        .atMost(within)
        .until(
            () ->
                configuration(client).getWebhooks().stream()
                    .allMatch(w -> w.getClientConfig().getCaBundle() != null));
  }

  public static ValidatingWebhookConfiguration configuration(KubernetesClient client) {
    return client
        .admissionRegistration()
        .v1()
        .validatingWebhookConfigurations()
        .withName(CONFIGURATION)
        .get();
  }
}
