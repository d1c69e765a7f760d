package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How many taken addresses {@link BlockUsage} counts for each of this node's blocks. */
class BlockUsageTest {

  private static AddressKey key(String pool, String ip) {
    return new AddressKey(pool, IpAddress.parse(ip));
  }

  private static BlockRef ref(String pool, String cidr) {
    return new BlockRef(pool, Cidr.parse(cidr), "uid-" + cidr);
  }

  @Test
  void eachTakenAddressCountsForTheOneBlockThatHoldsIt() {
    NodeBlocks blocks = new NodeBlocks();
    BlockRef slot = ref("p", "10.0.0.0/28");
    BlockRef subClaim = ref("p", "10.0.0.3/32");
    BlockRef empty = ref("p", "10.0.0.16/28");
    blocks.claimed(slot);
    blocks.claimed(subClaim);
    blocks.claimed(empty);

    Set<AddressKey> taken =
        Set.of(
            key("p", "10.0.0.1"),
            key("p", "10.0.0.2"),
            key("p", "10.0.0.3"), // its sub-claim's, not the slot's
            key("p", "10.0.0.40"), // in no block of this node
            key("other", "10.0.0.1")); // same range, another pool

    assertThat(BlockUsage.of(blocks, taken))
        .extracting(usage -> usage.block().ref(), BlockUsage::allocated)
        .containsExactlyInAnyOrder(tuple(slot, 2L), tuple(subClaim, 1L), tuple(empty, 0L));
  }

  @Test
  void aNodeWithoutBlocksHasNoUsage() {
    assertThat(BlockUsage.of(new NodeBlocks(), Set.of(key("p", "10.0.0.1")))).isEmpty();
  }
}
