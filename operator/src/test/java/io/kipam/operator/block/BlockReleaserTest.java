package io.kipam.operator.block;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.api.v1alpha1.BlockShare;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import org.junit.jupiter.api.Test;

class BlockReleaserTest {

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private static BlockShare share() {
    BlockShare share = new BlockShare();
    share.setRequestedAt("2026-01-01T00:00:00.000Z");
    share.setReason("node b of pool p is short");
    return share;
  }

  @Test
  void aConversionCanBeAskedOfASlotWithoutStatusYet() {
    IPBlock slot = new IPBlock();
    slot.setMetadata(new ObjectMetaBuilder().withName("p.10.0.0.0-28").build());
    slot.setSpec(new IPBlockSpec("p", "10.0.0.0/28", "a"));

    IPBlock copy = BlockReleaser.withShare(SERIALIZATION, slot, share());

    assertThat(copy.getStatus().getShare().getReason()).isEqualTo("node b of pool p is short");
    assertThat(slot.getStatus()).as("the cached slot is left alone").isNull();
  }

  @Test
  void aConversionRequestKeepsWhatTheHolderReported() {
    IPBlock slot = Slots.block("10.0.0.0/28", "a", 7);

    IPBlock copy = BlockReleaser.withShare(SERIALIZATION, slot, share());

    assertThat(copy.getStatus().getAllocated()).isEqualTo(7);
    assertThat(copy.getStatus().getShare()).isNotNull();
    assertThat(slot.getStatus().getShare()).isNull();
  }
}
