package io.kipam.system.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The duplicate checker behind "addresses held twice: []" ({@link ChurnAndSample}) sees what it
 * used to hide: an address held twice across two pools of one network (it looked at one pool), and
 * samples the API server did not answer (it skipped them and reported none held twice). On a
 * control plane of its own, whose kube-apiserver it stops; the IPAddresses written by hand, in
 * namespaces and pools drawn from a printed seed.
 */
class ChurnAndSampleIT {

  private static ControlPlane controlPlane;
  private static KubernetesClient client;

  @BeforeAll
  static void start() {
    controlPlane = ControlPlane.fresh();
    client = controlPlane.client();
    KipamCrds.install(client);
  }

  @AfterAll
  static void stop() {
    if (controlPlane != null) {
      controlPlane.close();
    }
  }

  @Test
  void anAddressHeldTwiceInOneNetworkIsFoundAcrossPoolsAndNamespaces() throws Exception {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    System.out.println("ChurnAndSampleIT seed " + seed);
    Random random = new Random(seed);
    List<String> namespaces =
        List.of(Fixtures.namespace(client, "dup-a"), Fixtures.namespace(client, "dup-b"));
    int first = random.nextInt(2);
    String ip = "10.230.0." + (1 + random.nextInt(250));
    // One network, two pools, two namespaces: the same address twice.
    address(namespaces.get(first), "held-1", "net-a", "pool-a1", ip);
    address(namespaces.get(1 - first), "held-2", "net-a", "pool-a2", ip);
    // The same address in another network is another address.
    address(namespaces.get(first), "other-net", "net-b", "pool-b", ip);

    // One checker per pool of the test, as the tests of several pools start them.
    ChurnAndSample sampled = ChurnAndSample.start(client, "pool-a1", List.of());
    ChurnAndSample other = ChurnAndSample.start(client, "pool-a2", List.of());
    ChurnAndSample third = ChurnAndSample.start(client, "pool-b", List.of());
    await().atMost(Duration.ofSeconds(30)).until(() -> sampled.samples() >= 3);

    assertThatThrownBy(() -> sampled.closeAndCheck("ChurnAndSampleIT", other, third))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("net-a " + ip)
        .hasMessageContaining("pool-a1")
        .hasMessageContaining("pool-a2")
        .hasMessageNotContaining("net-b");
  }

  @Test
  void aSampleTheApiServerDoesNotAnswerFailsTheCheck() throws Exception {
    ChurnAndSample sampled = ChurnAndSample.start(client, "pool-x", List.of());
    await().atMost(Duration.ofSeconds(30)).until(() -> sampled.samples() >= 2);
    controlPlane.stopApiServer();
    try {
      Thread.sleep(1500); // several samples' worth without an API server
    } finally {
      controlPlane.startApiServer();
    }

    assertThatThrownBy(() -> sampled.closeAndCheck("ChurnAndSampleIT"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("samples the API server did not answer");
    assertThat(sampled.samples()).isPositive();
  }

  private static void address(
      String namespace, String name, String network, String pool, String ip) {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(java.util.Map.of(io.kipam.api.ApiConstants.LABEL_POOL, pool))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip);
    spec.setPool(pool);
    spec.setNetwork(network);
    spec.setBlock(pool + ".0");
    spec.setNode("node-x");
    spec.setPod(new PodReference(name, "uid-" + name));
    spec.setContainerID("c-" + name);
    spec.setInterfaceName("eth0");
    address.setSpec(spec);
    client.resource(address).create();
  }
}
