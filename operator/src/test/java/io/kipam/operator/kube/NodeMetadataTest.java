package io.kipam.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What kipam-operator keeps of a Node in its caches, and what it drops. */
class NodeMetadataTest {

  private static Node kubeletNode() {
    return new NodeBuilder()
        .withNewMetadata()
        .withName("n1")
        .withUid("uid-1")
        .withResourceVersion("42")
        .withCreationTimestamp("2026-11-27T00:00:00Z")
        .withLabels(Map.of("zone", "a", "kubernetes.io/hostname", "n1"))
        .withAnnotations(
            Map.of(
                "kipam.io/demand", "pool-a",
                "node.alpha.kubernetes.io/ttl", "0",
                "volumes.kubernetes.io/controller-managed-attach-detach", "true"))
        .addNewManagedField()
        .withManager("kubelet")
        .endManagedField()
        .endMetadata()
        .withNewSpec()
        .withPodCIDR("10.0.0.0/24")
        .endSpec()
        .withNewStatus()
        .withCapacity(
            Map.of(
                "cpu", new Quantity("8"),
                "kipam.io/ip", new Quantity("62"),
                "ip.kipam.io/storage", new Quantity("14")))
        .withAllocatable(Map.of("cpu", new Quantity("7"), "kipam.io/ip", new Quantity("62")))
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .addNewImage()
        .withNames("registry.example/some/image:1.0")
        .endImage()
        .endStatus()
        .build();
  }

  @Test
  void keepsWhatTheOperatorReadsAndDropsTheRest() {
    Node kept = NodeMetadata.trim(kubeletNode());

    assertThat(kept.getMetadata().getName()).isEqualTo("n1");
    assertThat(kept.getMetadata().getUid()).isEqualTo("uid-1");
    assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("42");
    assertThat(kept.getMetadata().getLabels()).containsEntry("zone", "a");
    assertThat(kept.getMetadata().getAnnotations()).containsOnlyKeys("kipam.io/demand");
    assertThat(kept.getMetadata().getManagedFields()).isEmpty();
    assertThat(kept.getSpec()).isNull();
    assertThat(kept.getStatus().getCapacity())
        .containsOnlyKeys("kipam.io/ip", "ip.kipam.io/storage");
    assertThat(kept.getStatus().getAllocatable()).containsOnlyKeys("kipam.io/ip");
    assertThat(kept.getStatus().getConditions()).isEmpty();
    assertThat(kept.getStatus().getImages()).isEmpty();
  }

  @Test
  void aNodeWithoutStatusOrAnnotationsStaysWithout() {
    Node bare = new NodeBuilder().withNewMetadata().withName("n2").endMetadata().build();

    Node kept = NodeMetadata.trim(bare);

    assertThat(kept.getMetadata().getName()).isEqualTo("n2");
    assertThat(kept.getStatus()).isNull();
    assertThat(kept.getMetadata().getAnnotations()).isNullOrEmpty();
  }
}
