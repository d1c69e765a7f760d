package io.kipam.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.testing.FaultProxy.Fault;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@link FaultProxy} between the real API server and a fabric8 client built from a kubeconfig, as
 * kipam-node builds its own, while the administrator client talks to the API server directly and
 * sees what really happened.
 */
@WithControlPlane
class FaultProxyIT {

  private static final long SEED = 7;
  private static final int REQUEST_TIMEOUT_MILLIS = 2_000;

  private final ControlPlane controlPlane;
  private final KubernetesClient admin;
  private FaultProxy proxy;
  private KubernetesClient viaProxy;
  private String namespace;

  FaultProxyIT(ControlPlane controlPlane) {
    this.controlPlane = controlPlane;
    this.admin = controlPlane.client();
  }

  @BeforeEach
  void startProxy() throws IOException {
    namespace = Fixtures.namespace(admin, "fault-proxy");
    proxy = FaultProxy.start(controlPlane.apiServerPort(), SEED);
    Config config =
        Config.fromKubeconfig(Files.readString(controlPlane.kubeconfigVia(proxy.port())));
    config.setRequestTimeout(REQUEST_TIMEOUT_MILLIS);
    viaProxy = new KubernetesClientBuilder().withConfig(config).build();
  }

  @AfterEach
  void stopProxy() {
    viaProxy.close();
    proxy.close();
  }

  @Test
  void passThroughCarriesCreatesAndReads() {
    viaProxy.configMaps().inNamespace(namespace).resource(configMap("through")).create();

    assertThat(viaProxy.configMaps().inNamespace(namespace).withName("through").get()).isNotNull();
    assertThat(admin.configMaps().inNamespace(namespace).withName("through").get()).isNotNull();
    assertThat(proxy.bytesToServer()).isPositive();
    assertThat(proxy.bytesToClient()).isPositive();
    for (Fault fault : Fault.values()) {
      assertThat(proxy.injected(fault)).as(fault.name()).isZero();
    }
  }

  @Test
  void aCreateWhoseAnswerIsDroppedFailsForTheClientAlthoughTheServerWroteIt() {
    proxy.inject(Faults.dropAfterRequest(1.0));

    assertThatThrownBy(
            () ->
                viaProxy
                    .configMaps()
                    .inNamespace(namespace)
                    .resource(configMap("unknown-outcome"))
                    .create())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("closed");

    // Once, although the client keeps fabric8's default retries: a connection closed under a
    // request is not retried, so the error reaches the caller.
    assertThat(proxy.injected(Fault.DROPPED_AFTER_REQUEST)).isEqualTo(1);
    // The client saw an error, yet the object exists: a write with unknown outcome, which only a
    // fresh read settles.
    assertThat(admin.configMaps().inNamespace(namespace).withName("unknown-outcome").get())
        .isNotNull();
    proxy.passThrough();
    assertThat(viaProxy.configMaps().inNamespace(namespace).withName("unknown-outcome").get())
        .isNotNull();
  }

  @Test
  void answersDelayedPastTheRequestTimeoutTimeTheClientOut() {
    viaProxy.configMaps().inNamespace(namespace).resource(configMap("slow")).create();
    proxy.inject(Faults.delayResponses(Duration.ofMillis(10L * REQUEST_TIMEOUT_MILLIS), 1.0));

    assertThatThrownBy(() -> viaProxy.configMaps().inNamespace(namespace).withName("slow").get())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("timeout");

    assertThat(proxy.injected(Fault.DELAYED)).isPositive();
    proxy.passThrough();
    assertThat(viaProxy.configMaps().inNamespace(namespace).withName("slow").get()).isNotNull();
  }

  private static ConfigMap configMap(String name) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().build();
  }
}
