package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.RealNode;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real node itself: kubelet, containerd and runc run a pod from an imported image, with an
 * address from the reference bridge and host-local plugins. Proves the node before kipam is
 * installed on it. Fails, never skips, when the node cannot start (no root, no containerd).
 */
class RealNodeE2E {

  private static RealNode node;

  @BeforeAll
  static void startNode() {
    node = RealNode.start();
  }

  @AfterAll
  static void stopNode() {
    if (node != null) {
      node.close();
    }
  }

  @Test
  void runsAPodWithAnAddressFromTheBridgeNetwork() {
    node.writeNetworkConfig(
        "10-bridge.conflist",
        """
        {
          "cniVersion": "1.0.0",
          "name": "real-node-bridge",
          "plugins": [
            {
              "type": "bridge",
              "bridge": "kipam-br0",
              "isGateway": true,
              "ipam": {
                "type": "host-local",
                "dataDir": "%s",
                "ranges": [[{"subnet": "10.244.0.0/24"}]]
              }
            }
          ]
        }
        """
            .formatted(node.cniDataDir()));
    node.awaitReady();
    KubernetesClient client = node.client();
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("workload")
            .withNamespace("default")
            .endMetadata()
            .withNewSpec()
            .withNodeName(RealNode.NODE_NAME)
            .withTerminationGracePeriodSeconds(1L)
            .addNewContainer()
            .withName("workload")
            .withImage("kipam.io/workload:1")
            .withImagePullPolicy("Never")
            .endContainer()
            .endSpec()
            .build();

    long created = System.nanoTime();
    client.pods().resource(pod).create();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> {
              Pod now = client.pods().inNamespace("default").withName("workload").get();
              assertThat(now.getStatus().getPhase()).isEqualTo("Running");
              assertThat(now.getStatus().getPodIP()).startsWith("10.244.0.");
            });
    System.out.printf(
        "pod Running with an address %.2f s after create%n", (System.nanoTime() - created) / 1e9);

    client.pods().inNamespace("default").withName("workload").delete();
    await()
        .atMost(Duration.ofMinutes(1))
        .until(() -> client.pods().inNamespace("default").withName("workload").get() == null);
  }
}
