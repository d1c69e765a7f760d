package io.kipam.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotModesAndGeometryTest {

  private static IPBlock block(String node, BlockMode mode, String parent) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("p.10-0-0-0-28").build());
    IPBlockSpec spec = new IPBlockSpec("p", "10.0.0.0/28", node);
    spec.setParent(parent);
    block.setSpec(spec);
    if (mode != null) {
      IPBlockStatus status = new IPBlockStatus();
      status.setMode(mode);
      block.setStatus(status);
    }
    return block;
  }

  @Test
  void aSlotIsSharedByItsModeOrForHavingNoNode() {
    assertThat(SlotModes.shared(block("a", null, null))).isFalse();
    assertThat(SlotModes.shared(block("a", BlockMode.Exclusive, null))).isFalse();
    assertThat(SlotModes.shared(block("a", BlockMode.Shared, null)))
        .as("converted: spec.node still names its former holder")
        .isTrue();
    assertThat(SlotModes.shared(block(null, null, null))).as("Shared from birth").isTrue();
  }

  @Test
  void aSubClaimNamesItsParent() {
    assertThat(SlotModes.subClaim(block("a", null, "p.10-0-0-0-28"))).isTrue();
    assertThat(SlotModes.subClaim(block("a", null, null))).isFalse();
  }

  @Test
  void aPoolsGeometryIsReadFromEveryFieldOfItsSpec() {
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.0.0.0/24");
    spec.setBlockSize(26);
    spec.setRangeStart("10.0.0.10");
    spec.setRangeEnd("10.0.0.109");
    spec.setExclude(List.of("10.0.0.20/30"));
    spec.setGateway("10.0.0.1");

    assertThat(PoolGeometry.of(spec).assignableCount().longValue()).isEqualTo(100 - 4);
  }

  @Test
  void noSpecOrABadOneIsNamed() {
    assertThatThrownBy(() -> PoolGeometry.of(null)).hasMessage("the pool has no spec");
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.0.0.0/33");
    spec.setBlockSize(26);
    assertThatThrownBy(() -> PoolGeometry.of(spec)).isInstanceOf(IllegalArgumentException.class);
  }
}
