package io.kipam.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.WithControlPlane;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The block CRD as the API server enforces it for exclusive and shared slots: a sub-claim is one
 * address of a slot of its own pool, held by a node; a slot without a node is Shared; spec.parent
 * never changes; and status.mode moves only from Exclusive to Shared.
 */
@WithControlPlane(crds = true)
class BlockAdmissionIT {

  private static final String POOL = "admission";

  private final KubernetesClient client = ControlPlane.shared().client();

  @Test
  void slotsWithAndWithoutNodeAndSubClaimsOfBothFamiliesAreAccepted() {
    IPBlock exclusive = client.resource(slot("10.30.0.0/26", "node-a")).create();
    IPBlock sharedFromBirth = client.resource(slot("10.30.0.64/26", null)).create();
    IPBlock v4 = client.resource(subClaim("10.30.0.70", "node-b", name(sharedFromBirth))).create();
    IPBlock v6Slot = client.resource(slot("fd00:30::/122", null)).create();
    IPBlock v6 = client.resource(subClaim("fd00:30::7", "node-c", name(v6Slot))).create();

    assertThat(exclusive.getSpec().getParent()).isNull();
    assertThat(sharedFromBirth.getSpec().getNode()).isNull();
    assertThat(name(v4)).isEqualTo(POOL + ".10-30-0-70-32");
    assertThat(v4.getSpec().getParent()).isEqualTo(POOL + ".10-30-0-64-26");
    assertThat(v6.getSpec().getCidr()).isEqualTo("fd00:30::7/128");
    assertThat(name(v6)).isEqualTo(POOL + ".fd00-30-0-0-0-0-0-7-128");
  }

  @Test
  void aSecondSubClaimOfTheSameAddressCollidesOnCreate() {
    IPBlock parent = client.resource(slot("10.30.1.0/26", null)).create();
    client.resource(subClaim("10.30.1.9", "node-a", name(parent))).create();

    assertThatThrownBy(
            () -> client.resource(subClaim("10.30.1.9", "node-b", name(parent))).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("invalidBlocks")
  void invalidBlockIsRefusedWithAMessageNamingTheField(
      String description, IPBlock block, String expectedMessage) {
    expectRefusal(description, () -> client.resource(block).create(), expectedMessage);
    assertThat(client.resources(IPBlock.class).withName(name(block)).get())
        .as("nothing was stored")
        .isNull();
  }

  static Stream<Arguments> invalidBlocks() {
    String parent = ResourceNames.blockName(POOL, Cidr.parse("10.30.2.0/26"));
    IPBlock wideSubClaim = slot("10.30.2.0/28", "node-a");
    wideSubClaim.getSpec().setParent(parent);
    IPBlock wideV6SubClaim = slot("fd00:30:2::/127", "node-a");
    wideV6SubClaim
        .getSpec()
        .setParent(ResourceNames.blockName(POOL, Cidr.parse("fd00:30:2::/122")));
    IPBlock otherPoolsParent = subClaim("10.30.2.5", "node-a", "other.10-30-2-0-26");
    IPBlock prefixOnlyParent = subClaim("10.30.2.6", "node-a", POOL + "-b.10-30-2-0-26");
    IPBlock nodelessSubClaim = subClaim("10.30.2.7", null, parent);
    IPBlock emptyNode = slot("10.30.2.64/26", "");
    IPBlock emptyParent = subClaim("10.30.2.8", "node-a", "");
    IPBlock missingCidr = slot("10.30.2.128/26", "node-a");
    missingCidr.getSpec().setCidr(null);
    return Stream.of(
        Arguments.of("IPv4 sub-claim of a /28", wideSubClaim, SUB_CLAIM_HOST_PREFIX),
        Arguments.of("IPv6 sub-claim of a /127", wideV6SubClaim, SUB_CLAIM_HOST_PREFIX),
        Arguments.of("sub-claim under another pool's slot", otherPoolsParent, SUB_CLAIM_SAME_POOL),
        Arguments.of(
            "sub-claim under a pool whose name only starts alike",
            prefixOnlyParent,
            SUB_CLAIM_SAME_POOL),
        Arguments.of("sub-claim without a node", nodelessSubClaim, SUB_CLAIM_HAS_NODE),
        Arguments.of("empty spec.node", emptyNode, "spec.node"),
        Arguments.of("empty spec.parent", emptyParent, "spec.parent"),
        Arguments.of("missing spec.cidr", missingCidr, "spec.cidr: Required value"));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("parentChanges")
  void parentCannotBeSetUnsetOrChanged(
      String description, IPBlock before, Consumer<IPBlock> change) {
    client.resource(before).create();
    IPBlock changed = client.resources(IPBlock.class).withName(name(before)).get();
    change.accept(changed);

    expectRefusal(description, () -> client.resource(changed).update(), PARENT_IMMUTABLE);
    assertThat(client.resources(IPBlock.class).withName(name(before)).get().getSpec().getParent())
        .isEqualTo(before.getSpec().getParent());
  }

  static Stream<Arguments> parentChanges() {
    String parentA = ResourceNames.blockName(POOL, Cidr.parse("10.30.3.0/26"));
    String parentB = ResourceNames.blockName(POOL, Cidr.parse("10.30.3.64/26"));
    return Stream.of(
        Arguments.of(
            "parent set on a host-prefix slot",
            slot("10.30.3.200/32", "node-a"),
            (Consumer<IPBlock>) b -> b.getSpec().setParent(parentA)),
        Arguments.of(
            "parent unset",
            subClaim("10.30.3.1", "node-a", parentA),
            (Consumer<IPBlock>) b -> b.getSpec().setParent(null)),
        Arguments.of(
            "parent changed",
            subClaim("10.30.3.2", "node-a", parentA),
            (Consumer<IPBlock>) b -> b.getSpec().setParent(parentB)));
  }

  @Test
  void modeMovesFromExclusiveToSharedAndNeverBack() {
    IPBlock block = client.resource(slot("10.30.4.0/26", "node-a")).create();

    IPBlock exclusive = writeMode(block, BlockMode.Exclusive);
    assertThat(exclusive.getStatus().getMode()).isEqualTo(BlockMode.Exclusive);
    IPBlock shared = writeMode(exclusive, BlockMode.Shared);
    assertThat(shared.getStatus().getMode()).isEqualTo(BlockMode.Shared);

    expectRefusal(
        "Shared to Exclusive", () -> writeMode(shared, BlockMode.Exclusive), SHARED_STAYS);
    expectRefusal("Shared to unset", () -> writeMode(shared, null), SHARED_STAYS);
    expectRefusal(
        "Shared to no status at all",
        () -> {
          IPBlock bare = fresh(shared);
          bare.setStatus(null);
          client.resource(bare).updateStatus();
        },
        SHARED_STAYS);
    assertThat(fresh(block).getStatus().getMode()).isEqualTo(BlockMode.Shared);
  }

  @Test
  void aSlotWithoutModeMayBecomeSharedAndOtherStatusWritesKeepItShared() {
    IPBlock block = client.resource(slot("10.30.5.0/26", "node-a")).create();
    IPBlock shared = writeMode(block, BlockMode.Shared);

    IPBlock counted = fresh(shared);
    counted.getStatus().setAllocated(3L);
    IPBlock after = client.resource(counted).updateStatus();

    assertThat(after.getStatus().getMode()).isEqualTo(BlockMode.Shared);
    assertThat(after.getStatus().getAllocated()).isEqualTo(3L);
  }

  @Test
  void aSlotWithoutNodeIsSharedAndCannotBeMarkedExclusive() {
    IPBlock block = client.resource(slot("10.30.6.0/26", null)).create();

    expectRefusal(
        "Exclusive on a slot without node",
        () -> writeMode(block, BlockMode.Exclusive),
        NODELESS_IS_SHARED);
    assertThat(writeMode(block, BlockMode.Shared).getStatus().getMode())
        .isEqualTo(BlockMode.Shared);
  }

  @Test
  void aSubClaimHasNoMode() {
    IPBlock parent = client.resource(slot("10.30.7.0/26", null)).create();
    IPBlock sub = client.resource(subClaim("10.30.7.3", "node-a", name(parent))).create();

    for (BlockMode mode : BlockMode.values()) {
      expectRefusal("sub-claim marked " + mode, () -> writeMode(sub, mode), SUB_CLAIM_HAS_NO_MODE);
    }
    IPBlock counted = fresh(sub);
    counted.setStatus(new IPBlockStatus());
    counted.getStatus().setAllocated(1L);
    assertThat(client.resource(counted).updateStatus().getStatus().getAllocated()).isEqualTo(1L);
  }

  @Test
  void aConversionRequestIsForSlotsOnly() {
    IPBlock exclusive = client.resource(slot("10.30.8.0/26", "node-a")).create();
    IPBlock parent = client.resource(slot("10.30.8.64/26", null)).create();
    IPBlock sub = client.resource(subClaim("10.30.8.67", "node-a", name(parent))).create();

    assertThat(writeShare(exclusive).getStatus().getShare().getRequestedAt())
        .isEqualTo("2026-01-01T00:00:00Z");
    expectRefusal("sub-claim asked to convert", () -> writeShare(sub), SHARE_ONLY_ON_SLOTS);
  }

  private IPBlock writeShare(IPBlock block) {
    IPBlock current = fresh(block);
    if (current.getStatus() == null) {
      current.setStatus(new IPBlockStatus());
    }
    BlockShare share = new BlockShare();
    share.setRequestedAt("2026-01-01T00:00:00Z");
    current.getStatus().setShare(share);
    return client.resource(current).updateStatus();
  }

  private IPBlock writeMode(IPBlock block, BlockMode mode) {
    IPBlock current = fresh(block);
    if (current.getStatus() == null) {
      current.setStatus(new IPBlockStatus());
    }
    current.getStatus().setMode(mode);
    return client.resource(current).updateStatus();
  }

  private IPBlock fresh(IPBlock block) {
    return client.resources(IPBlock.class).withName(name(block)).get();
  }

  private static void expectRefusal(String description, ThrowingCallable write, String message) {
    assertThatThrownBy(write)
        .as(description)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as("HTTP status").isEqualTo(422);
              assertThat(e.getMessage()).contains(message);
            });
  }

  private static IPBlock slot(String cidr, String node) {
    return TestBlocks.slot(POOL, cidr, node);
  }

  private static IPBlock subClaim(String address, String node, String parent) {
    return TestBlocks.subClaim(POOL, address, node, parent);
  }

  private static String name(IPBlock block) {
    return block.getMetadata().getName();
  }

  private static final String SUB_CLAIM_HOST_PREFIX =
      "spec.cidr of a sub-claim (spec.parent set) must be a host prefix";
  private static final String SUB_CLAIM_SAME_POOL = "spec.parent must name a slot of spec.pool";
  private static final String SUB_CLAIM_HAS_NODE = "spec.node is required on a sub-claim";
  private static final String PARENT_IMMUTABLE = "spec.parent is immutable";
  private static final String SHARED_STAYS = "status.mode cannot leave Shared";
  private static final String NODELESS_IS_SHARED =
      "status.mode of a block without spec.node must be Shared";
  private static final String SUB_CLAIM_HAS_NO_MODE = "status.mode is for slots";
  private static final String SHARE_ONLY_ON_SLOTS = "status.share is for slots";
}
