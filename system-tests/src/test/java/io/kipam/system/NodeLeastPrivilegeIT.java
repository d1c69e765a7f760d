package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.InstalledIdentities;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.PoolAssertions;
import io.kipam.testing.ControlPlane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * kipam-node works with nothing but what the install gives it: on a control plane of the test's
 * own, config/crd, config/rbac and config/admission are applied as users apply them, and each of
 * three real kipam-node processes runs with a token of the {@code kipam-node} service account bound
 * to its Node (as a DaemonSet pod's projected token is), kipam-operator with a token of its own
 * service account. ADD and DEL through the real executable, for pods in three namespaces, claim
 * Exclusive blocks, write their status, claim a slot Shared from birth and sub-claims in it,
 * convert an Exclusive slot to Shared at kipam-operator's request, and give everything back,
 * without a single refusal. A daemon that claims to be another node than its token is bound to gets
 * nothing: the admission policy refuses its block claims, the ADD fails naming the rule, and
 * nothing is written for the node it claims to be.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeLeastPrivilegeIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final String NAMESPACE = "kipam-system";
  private static final int NODES = 3;

  /**
   * Status written every second; slots claimed Shared from birth when a pool has fewer unclaimed
   * slots than Nodes, as the small pool below has.
   */
  private static final Map<String, String> DAEMON =
      Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1", "KIPAM_SHARED_SLOTS", "true");

  private static ControlPlane controlPlane;
  private static KubernetesClient client;
  private static KipamProcesses processes;
  private static final List<NodeRig> rigs = new ArrayList<>();
  private static InstalledIdentities identities;
  private static String pool;

  @BeforeAll
  static void install() throws Exception {
    controlPlane = ControlPlane.fresh();
    client = controlPlane.client();
    InstalledIdentities.apply(controlPlane, "crd", "rbac", "admission");
    processes = new KipamProcesses(controlPlane, client, "least");
    identities = new InstalledIdentities(controlPlane, processes.dir);
    identities.asInstalled(processes.operator()).startLeading(Map.of(), WITHIN);
    pool = Cluster.readiedPool(client, "least", Cluster.spec("10.219.0.0/24", 28, 0));
    for (int n = 0; n < NODES; n++) {
      rigs.add(processes.node(pool, DAEMON, NodeLeastPrivilegeIT::nodeKubeconfig));
    }
  }

  @AfterAll
  static void stop() throws Exception {
    Close.all(processes, controlPlane);
  }

  @Test
  @Order(1)
  void eachNodeAllocatesAndReleasesWithItsOwnRoleAndToken() throws Exception {
    int pods = 6;
    for (NodeRig rig : rigs) {
      for (int i = 0; i < pods; i++) {
        CniCall.Outcome outcome = rig.add(pool, i);
        assertThat(outcome.ok())
            .as("ADD %s/%d: %s; log %s", rig.node, i, outcome.stdout(), rig.daemon.log)
            .isTrue();
      }
    }
    List<IPAddress> held = Cluster.addresses(client, pool);
    assertThat(held).hasSize(NODES * pods);
    assertThat(held.stream().map(a -> a.getSpec().getIp()).distinct()).hasSize(NODES * pods);
    assertThat(held.stream().map(a -> a.getMetadata().getNamespace()).distinct()).hasSize(3);
    for (IPAddress address : held) {
      Pod pod =
          client
              .pods()
              .inNamespace(address.getMetadata().getNamespace())
              .withName(address.getSpec().getPod().getName())
              .get();
      assertThat(address.getMetadata().getOwnerReferences())
          .as("owner of %s", address.getMetadata().getName())
          .singleElement()
          .satisfies(o -> assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid()));
      assertThat(pod.getSpec().getNodeName()).isEqualTo(address.getSpec().getNode());
    }
    for (NodeRig rig : rigs) {
      assertThat(rig.blocks(pool)).as("blocks claimed by %s", rig.node).isNotEmpty();
      await()
          .atMost(WITHIN)
          .untilAsserted(
              () ->
                  assertThat(
                          rig.blocks(pool).stream()
                              .mapToLong(NodeLeastPrivilegeIT::allocated)
                              .sum())
                      .as("status.allocated of the blocks of %s", rig.node)
                      .isEqualTo((long) pods));
    }

    for (NodeRig rig : rigs) {
      for (int i = 0; i < pods; i++) {
        CniCall.Outcome outcome = rig.del(pool, i);
        assertThat(outcome.ok()).as("DEL %s/%d: %s", rig.node, i, outcome.stdout()).isTrue();
      }
    }
    assertThat(Cluster.addresses(client, pool)).isEmpty();
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(Cluster.blocks(client, pool))
                    .as("block status after every DEL")
                    .allSatisfy(b -> assertThat(allocated(b)).isZero()));
    assertNoRefusalLogged();
  }

  /**
   * A /27 in /28 slots: two slots for three nodes, so the first claim is a slot Shared from birth
   * (no spec.node), each address in it a sub-claim of the node that holds it; the daemons write the
   * slot's mode, create and give back sub-claims, all admitted.
   */
  @Test
  @Order(2)
  void aSlotSharedFromBirthServesEveryNodeThroughSubClaims() throws Exception {
    String small =
        Cluster.readiedPool(client, "least-shared", Cluster.spec("10.219.1.0/27", 28, 0));
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(
                        client.resources(IPPool.class).withName(small).get().getStatus().getNodes())
                    .as("status.nodes of %s", small)
                    .isEqualTo(NODES));
    int pods = 4;
    Set<String> ips = new HashSet<>();
    for (int i = 0; i < pods; i++) {
      for (NodeRig rig : rigs) {
        CniCall.Outcome outcome = rig.addRetried(List.of(small), 100 + i, WITHIN);
        assertThat(outcome.ok())
            .as("ADD %s/%d: %s; log %s", rig.node, i, outcome.stdout(), rig.daemon.log)
            .isTrue();
        ips.add(outcome.ip());
      }
    }
    assertThat(ips).hasSize(NODES * pods);
    List<IPBlock> blocks = Cluster.blocks(client, small);
    List<IPBlock> slots = blocks.stream().filter(b -> b.getSpec().getParent() == null).toList();
    assertThat(slots).as("a slot Shared from birth").anyMatch(s -> s.getSpec().getNode() == null);
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(Cluster.blocks(client, small))
                    .filteredOn(
                        b -> b.getSpec().getParent() == null && b.getSpec().getNode() == null)
                    .allSatisfy(
                        s ->
                            assertThat(s.getStatus().getMode())
                                .as("mode of %s", s.getMetadata().getName())
                                .isEqualTo(BlockMode.Shared)));
    for (NodeRig rig : rigs) {
      assertThat(blocks)
          .as("sub-claims of %s", rig.node)
          .anyMatch(b -> b.getSpec().getParent() != null && rig.node.equals(b.getSpec().getNode()));
    }

    for (int i = 0; i < pods; i++) {
      for (NodeRig rig : rigs) {
        CniCall.Outcome outcome = rig.del(small, 100 + i);
        assertThat(outcome.ok()).as("DEL %s/%d: %s", rig.node, i, outcome.stdout()).isTrue();
      }
    }
    assertThat(Cluster.addresses(client, small)).isEmpty();
    PoolAssertions.subClaimsAndAddressesGone(client, small, WITHIN);
    assertNoRefusalLogged();
  }

  /**
   * Two more nodes whose daemons claim every slot Exclusive, a /27 in two /28 slots, one slot each;
   * the first node then needs more addresses than its slot holds: kipam-operator asks the other
   * slot to become Shared, its holder sub-claims the address it holds and writes the mode, and the
   * first node sub-claims the rest of it, all admitted.
   */
  @Test
  @Order(3)
  void anExclusiveSlotIsConvertedAndSubClaimedUnderThePolicy() throws Exception {
    String small =
        Cluster.readiedPool(client, "least-convert", Cluster.spec("10.219.2.0/27", 28, 0));
    Map<String, String> exclusive = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");
    NodeRig needy = processes.node(small, exclusive, NodeLeastPrivilegeIT::nodeKubeconfig);
    NodeRig donor = processes.node(small, exclusive, NodeLeastPrivilegeIT::nodeKubeconfig);
    List<NodeRig> both = List.of(needy, donor);
    for (NodeRig rig : both) {
      CniCall.Outcome first = rig.add(small, 200);
      assertThat(first.ok()).as("ADD %s: %s", rig.node, first.stdout()).isTrue();
    }
    assertThat(Cluster.blocks(client, small))
        .as("one Exclusive slot per node")
        .hasSize(2)
        .allMatch(b -> b.getSpec().getNode() != null);
    int pods = 20; // 15 fit in the first node's slot
    for (int i = 201; i < 200 + pods; i++) {
      CniCall.Outcome outcome = needy.addRetried(List.of(small), i, WITHIN);
      assertThat(outcome.ok())
          .as("ADD %s/%d: %s; log %s", needy.node, i, outcome.stdout(), needy.daemon.log)
          .isTrue();
    }
    assertThat(Cluster.addresses(client, small).stream().map(a -> a.getSpec().getIp()).distinct())
        .hasSize(pods + 1);
    IPBlock donated =
        Cluster.blocks(client, small).stream()
            .filter(
                b -> donor.node.equals(b.getSpec().getNode()) && b.getSpec().getParent() == null)
            .findFirst()
            .orElseThrow();
    assertThat(donated.getStatus().getMode())
        .as("mode of the donor's slot")
        .isEqualTo(BlockMode.Shared);
    assertThat(Cluster.blocks(client, small))
        .as("sub-claims of both nodes in the converted slot")
        .anyMatch(
            b ->
                donated.getMetadata().getName().equals(b.getSpec().getParent())
                    && needy.node.equals(b.getSpec().getNode()))
        .anyMatch(
            b ->
                donated.getMetadata().getName().equals(b.getSpec().getParent())
                    && donor.node.equals(b.getSpec().getNode()));

    for (int i = 200; i < 200 + pods; i++) {
      assertThat(needy.del(small, i).ok()).isTrue();
    }
    assertThat(donor.del(small, 200).ok()).isTrue();
    assertThat(Cluster.addresses(client, small)).isEmpty();
    PoolAssertions.subClaimsAndAddressesGone(client, small, WITHIN);
    assertNoRefusalLogged(both);
  }

  /**
   * A daemon with node A's token that says it runs on node B (a misconfigured or compromised
   * daemon) is refused every block claim by the admission policy: its ADD fails with the policy's
   * message, and no IPBlock or IPAddress names B.
   */
  @Test
  @Order(4)
  void aDaemonClaimingAnotherNodeGetsNoAddress() throws Exception {
    NodeRig nodeA = rigs.get(0);
    Path tokenOfA = identities.node(nodeA.node);
    awaitPolicyRefuses(tokenOfA, nodeA.node);
    NodeRig impostor = processes.node(pool, DAEMON, node -> tokenOfA);

    CniCall.Outcome outcome = impostor.add(pool, 0);
    assertThat(outcome.ok()).as(outcome.stdout()).isFalse();
    assertThat(outcome.stdout())
        .contains("\"code\":7,")
        .contains(
            "kipam-node of node "
                + nodeA.node
                + " may only write IPBlocks whose spec.node is "
                + nodeA.node)
        .contains("would have spec.node " + impostor.node)
        .contains("NODE_NAME is the Node its token is bound to");
    assertThat(impostor.blocks(pool)).isEmpty();
    assertThat(Cluster.blocks(client, pool))
        .noneMatch(b -> impostor.node.equals(b.getSpec().getNode()));
    assertThat(Cluster.addresses(client, pool))
        .noneMatch(a -> impostor.node.equals(a.getSpec().getNode()));
  }

  /** Waits until the policy is in force: node A's token is refused a block of another node. */
  private static void awaitPolicyRefuses(Path kubeconfig, String node) throws IOException {
    try (KubernetesClient asNode =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig)))
            .build()) {
      String cidr = "10.219.255.0/28";
      IPBlock probe = new IPBlock();
      probe.setMetadata(
          new ObjectMetaBuilder()
              .withName(ResourceNames.blockName(pool, Cidr.parse(cidr)))
              .addToLabels(ApiConstants.LABEL_POOL, pool)
              .build());
      probe.setSpec(new IPBlockSpec(pool, cidr, "not-" + node));
      await()
          .atMost(WITHIN)
          .untilAsserted(
              () ->
                  assertThatThrownBy(() -> asNode.resource(probe).dryRun().create())
                      .isInstanceOf(KubernetesClientException.class)
                      .hasMessageContaining("kipam-node of node " + node));
    }
  }

  /** No daemon was refused anything: its role and the policy let it do all it did. */
  private static void assertNoRefusalLogged() throws IOException {
    assertNoRefusalLogged(rigs);
  }

  private static void assertNoRefusalLogged(List<NodeRig> daemons) throws IOException {
    for (NodeRig rig : daemons) {
      assertThat(Files.readString(rig.daemon.log))
          .as("log of kipam-node on %s", rig.node)
          .doesNotContain("code=403")
          .doesNotContainIgnoringCase("forbidden");
    }
  }

  private static long allocated(IPBlock block) {
    return block.getStatus() == null || block.getStatus().getAllocated() == null
        ? 0
        : block.getStatus().getAllocated();
  }

  /** A kubeconfig with a kipam-node token bound to {@code node}, as its pod's projected token. */
  private static Path nodeKubeconfig(String node) {
    return identities.node(node);
  }
}
