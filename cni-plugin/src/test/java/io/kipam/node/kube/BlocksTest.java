package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import org.junit.jupiter.api.Test;

/**
 * kipam-node hands out addresses only from blocks named for their pool and CIDR (design §7): a
 * block whose name is a free slot's and whose CIDR is another node's slot is no claim of either.
 */
class BlocksTest {

  private static IPBlock block(String name, String pool, String cidr) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName(name).withUid("u-" + name).build());
    IPBlockSpec spec = new IPBlockSpec();
    spec.setPool(pool);
    spec.setCidr(cidr);
    spec.setNode("node-a");
    block.setSpec(spec);
    return block;
  }

  @Test
  void aBlockNamedForItsPoolAndCidrIsOne() {
    assertThat(Blocks.named(block("pods.10-0-1-0-26", "pods", "10.0.1.0/26"))).isTrue();
    assertThat(Blocks.named(block("pods.10-0-1-7-32", "pods", "10.0.1.7/32")))
        .as("a sub-claim")
        .isTrue();
  }

  @Test
  void aBlockNamedForAnotherSlotThanItsCidrIsNot() {
    assertThat(Blocks.named(block("pods.10-0-1-64-26", "pods", "10.0.1.0/26"))).isFalse();
    assertThat(Blocks.named(block("other.10-0-1-0-26", "pods", "10.0.1.0/26")))
        .as("another pool's name")
        .isFalse();
    assertThat(Blocks.named(block("pods.10-0-1-0-26", "pods", "not-a-cidr"))).isFalse();
    IPBlock noSpec = block("pods.10-0-1-0-26", "pods", "10.0.1.0/26");
    noSpec.setSpec(null);
    assertThat(Blocks.named(noSpec)).isFalse();
  }
}
