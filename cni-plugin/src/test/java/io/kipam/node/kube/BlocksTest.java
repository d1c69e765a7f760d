package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a block named for its pool and CIDR, pods.10-0-1-0-26, 10.0.1.0/26, true",
    "a sub-claim, pods.10-0-1-7-32, 10.0.1.7/32, true",
    "a block named for another slot than its CIDR, pods.10-0-1-64-26, 10.0.1.0/26, false",
    "a block named for another pool, other.10-0-1-0-26, 10.0.1.0/26, false",
    "a block whose CIDR is no CIDR, pods.10-0-1-0-26, not-a-cidr, false",
  })
  void aBlockIsOneOnlyWhenNamedForItsPoolAndCidr(
      String description, String name, String cidr, boolean named) {
    assertThat(Blocks.named(block(name, "pods", cidr))).as(description).isEqualTo(named);
  }

  @Test
  void aBlockWithoutASpecIsNot() {
    IPBlock noSpec = block("pods.10-0-1-0-26", "pods", "10.0.1.0/26");
    noSpec.setSpec(null);
    assertThat(Blocks.named(noSpec)).isFalse();
  }
}
