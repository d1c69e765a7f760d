package io.kipam.operator.capacity;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.operator.pool.Conditions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A /28 in /30 slots: 14 assignable addresses (its network and broadcast are not), the first and
 * last slot 3 each, the middle two 4 each.
 */
class NodeAddressesTest {

  private final Node a = node("a", Map.of("ip", "yes"));
  private final Node b = node("b", Map.of("ip", "yes"));
  private final Node outside = node("outside", Map.of());
  private final List<Node> nodes = List.of(a, b, outside);

  @Test
  void aPoolWithoutBlocksOffersEveryAddressToEveryNodeItsSelectorMatchesAndNoneToOthers() {
    var values = NodeAddresses.compute(nodes, List.of(pool("p", null, true)), List.of());
    assertThat(values.get("a")).containsExactly(Map.entry("kipam.io/ip", 14L));
    assertThat(values.get("b")).containsExactly(Map.entry("kipam.io/ip", 14L));
    assertThat(values.get("outside"))
        .as("outside every pool's selector: 0, not absent")
        .containsExactly(Map.entry("kipam.io/ip", 0L));
  }

  @Test
  void aNodeCountsItsOwnSlotsWholeAndLosesWhatOtherNodesHold() {
    IPBlock aSlot = block("10.0.0.4/30", "a", null);
    IPBlock shared = block("10.0.0.8/30", "outside", null);
    shared.getStatus().setMode(BlockMode.Shared);
    IPBlock bSub = block("10.0.0.9/32", "b", "p.10.0.0.8/30");
    IPBlock aSubOfOwnSlot = block("10.0.0.5/32", "a", "p.10.0.0.4/30");

    var values =
        NodeAddresses.compute(
            nodes, List.of(pool("p", null, true)), List.of(aSlot, shared, bSub, aSubOfOwnSlot));

    assertThat(values.get("a").get("kipam.io/ip"))
        .as("all but b's sub-claim: its own slot whole, the Shared slot's free addresses")
        .isEqualTo(13);
    assertThat(values.get("b").get("kipam.io/ip")).as("all but a's slot").isEqualTo(10);
    assertThat(values.get("outside").get("kipam.io/ip")).isZero();
  }

  @Test
  void anIpamClaimsAddressIsNoNodesToObtain() {
    IPBlock shared = block("10.0.0.8/30", null, null);
    IPBlock claimed = block("10.0.0.9/32", null, "p.10.0.0.8/30");
    claimed
        .getSpec()
        .setClaim(new io.kipam.api.v1alpha1.ClaimReference("vms", "vm-a.tenant", "u-1"));

    var values =
        NodeAddresses.compute(nodes, List.of(pool("p", null, true)), List.of(shared, claimed));

    assertThat(values.get("a").get("kipam.io/ip"))
        .as("every address but the claim's, for every node")
        .isEqualTo(values.get("b").get("kipam.io/ip"))
        .isEqualTo(
            NodeAddresses.compute(nodes, List.of(pool("p", null, true)), List.of(shared))
                    .get("a")
                    .get("kipam.io/ip")
                - 1);
  }

  @Test
  void aPoolNotReadyOrBeingDeletedOffersNothing() {
    IPPool deleting = pool("q", null, true);
    deleting.getMetadata().setDeletionTimestamp(Instant.now().toString());
    var values = NodeAddresses.compute(nodes, List.of(pool("p", null, false), deleting), List.of());
    assertThat(values.get("a")).containsExactly(Map.entry("kipam.io/ip", 0L));
  }

  @Test
  void eachNetworkHasItsOwnResourceAndPoolsOfOneNetworkAddUp() {
    IPPool second = pool("p2", null, true);
    second.getSpec().setCidr("10.0.1.0/28");
    var values =
        NodeAddresses.compute(
            nodes, List.of(pool("p", null, true), second, pool("m", "multus-a", true)), List.of());
    assertThat(values.get("a"))
        .containsEntry("kipam.io/ip", 28L)
        .containsEntry("ip.kipam.io/multus-a", 14L);
    assertThat(values.get("outside"))
        .containsEntry("kipam.io/ip", 0L)
        .containsEntry("ip.kipam.io/multus-a", 0L);
  }

  @Test
  void anIpv6PoolIsCapped() {
    IPPool v6 = pool("v6", null, true);
    v6.getSpec().setCidr("fd00::/64");
    v6.getSpec().setBlockSize(122);
    var values = NodeAddresses.compute(nodes, List.of(v6), List.of());
    assertThat(values.get("a").get("kipam.io/ip")).isEqualTo(NodeAddresses.CAP);
  }

  @Test
  void resourceNamesAndWhichAreKipams() {
    assertThat(NodeAddresses.resourceOf(null)).isEqualTo("kipam.io/ip");
    assertThat(NodeAddresses.resourceOf("")).isEqualTo("kipam.io/ip");
    assertThat(NodeAddresses.resourceOf("storage")).isEqualTo("ip.kipam.io/storage");
    assertThat(NodeAddresses.ours("ip.kipam.io/storage")).isTrue();
    assertThat(NodeAddresses.ours("nvidia.com/gpu")).isFalse();
  }

  private static Node node(String name, Map<String, String> labels) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(labels)
        .endMetadata()
        .build();
  }

  private static IPPool pool(String name, String network, boolean ready) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(name).withUid("uid-" + name).build());
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.0.0.0/28");
    spec.setBlockSize(30);
    spec.setNetwork(network);
    spec.setNodeSelector(new LabelSelectorBuilder().withMatchLabels(Map.of("ip", "yes")).build());
    pool.setSpec(spec);
    IPPoolStatus status = new IPPoolStatus();
    status.setConditions(
        new ArrayList<>(
            List.of(
                Conditions.of(
                    "Ready",
                    ready ? Conditions.TRUE : Conditions.FALSE,
                    ready ? "Checked" : "Overlap",
                    "",
                    1,
                    List.of(),
                    Instant.now()))));
    pool.setStatus(status);
    return pool;
  }

  private static IPBlock block(String cidr, String node, String parent) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("p." + cidr).withUid(cidr).build());
    IPBlockSpec spec = new IPBlockSpec("p", cidr, node);
    spec.setParent(parent);
    block.setSpec(spec);
    block.setStatus(new IPBlockStatus());
    return block;
  }
}
