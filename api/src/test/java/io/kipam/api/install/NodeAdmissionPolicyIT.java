package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.api.v1alpha1.TestAddresses;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The installed ValidatingAdmissionPolicy with real service-account tokens bound to two Nodes: a
 * node's daemon writes its own IPBlocks (slots, blocks, sub-claims) and IPAddresses and none of the
 * other node's, each refusal naming the rule; a token bound to no Node writes nothing; other users
 * are not affected.
 */
@WithControlPlane
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeAdmissionPolicyIT {

  private static final String POOL = "policy-" + Long.toString(System.nanoTime() % 100_000, 36);
  private static final List<String> NAMESPACES =
      List.of(POOL + "-red", POOL + "-green", POOL + "-blue");

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient admin = controlPlane.client();
  private final List<KubernetesClient> opened = new ArrayList<>();
  private KubernetesClient nodeA;
  private KubernetesClient nodeB;

  @BeforeAll
  void install() {
    KipamInstall.applyWith(controlPlane, List.of("node-a", "node-b"), NAMESPACES);
    io.kipam.testing.KipamCrds.installIpamClaims(admin);
    nodeA = clientWith(token("--bound-object-kind", "Node", "--bound-object-name", "node-a"));
    nodeB = clientWith(token("--bound-object-kind", "Node", "--bound-object-name", "node-b"));
    // A policy takes effect a moment after it is stored: wait until node-a is refused node-b's
    // block.
    IPBlock probe = slot("10.40.255.0/28", "node-b");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThatThrownBy(() -> nodeA.resource(probe).dryRun().create())
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("kipam-node of node node-a"));
  }

  @AfterAll
  void cleanUp() {
    opened.forEach(KubernetesClient::close);
    admin.resources(IPBlock.class).withLabel("kipam.io/pool", POOL).delete();
    NAMESPACES.forEach(n -> admin.namespaces().withName(n).delete());
  }

  @Test
  void aNodeWritesItsOwnBlocksSubClaimsAndAddresses() {
    for (KubernetesClient daemon : List.of(nodeA, nodeB)) {
      String node = daemon == nodeA ? "node-a" : "node-b";
      int third = daemon == nodeA ? 1 : 2;
      IPBlock block = daemon.resource(slot("10.40." + third + ".0/28", node)).create();
      // A slot claimed Shared from birth has no node; its sub-claims name theirs.
      IPBlock shared = daemon.resource(sharedFromBirth("10.40." + third + ".16/28", node)).create();
      IPBlock subClaim =
          daemon.resource(subClaim("10.40." + third + ".17", node, name(shared))).create();
      for (IPBlock b : List.of(block, subClaim)) {
        daemon.resources(IPBlock.class).withName(name(b)).edit(this::touched);
        daemon
            .resources(IPBlock.class)
            .withName(name(b))
            .subresource("status")
            .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"allocated\":1}}");
      }
      List<IPAddress> addresses = new ArrayList<>();
      for (int i = 0; i < NAMESPACES.size(); i++) {
        addresses.add(
            daemon
                .resource(address(NAMESPACES.get(i), "10.40." + third + "." + (i + 2), node))
                .create());
      }

      for (IPAddress address : addresses) {
        assertThat(daemon.resource(address).delete()).as("deleted %s", name(address)).hasSize(1);
      }
      for (IPBlock b : List.of(subClaim, block)) {
        assertThat(daemon.resource(b).delete()).as("deleted %s", name(b)).hasSize(1);
      }
      // A Shared slot is let go by kipam-operator, not by a node (NodeThreatsIT).
      assertThat(admin.resource(shared).delete()).as("deleted %s", name(shared)).hasSize(1);
    }
  }

  @Test
  void aNodeIsRefusedTheOtherNodesBlocksSubClaimsAndAddresses() {
    IPBlock block = nodeB.resource(slot("10.40.3.0/28", "node-b")).create();
    IPBlock shared = nodeB.resource(sharedFromBirth("10.40.3.16/28", "node-b")).create();
    IPBlock subClaim = nodeB.resource(subClaim("10.40.3.17", "node-b", name(shared))).create();
    List<IPAddress> addresses = new ArrayList<>();
    for (int i = 0; i < NAMESPACES.size(); i++) {
      addresses.add(
          nodeB.resource(address(NAMESPACES.get(i), "10.40.3." + (i + 2), "node-b")).create());
    }

    String writeBlocks =
        "kipam-node of node node-a may only write IPBlocks whose spec.node is node-a";
    String changeBlocks =
        "kipam-node of node node-a may only change or delete IPBlocks whose spec.node is node-a";
    refused(
        "create a block for node-b",
        () -> nodeA.resource(slot("10.40.4.0/28", "node-b")).create(),
        writeBlocks
            + " (or a slot Shared from birth, without spec.node); IPBlock "
            + ResourceNames.blockName(POOL, Cidr.parse("10.40.4.0/28"))
            + " would have spec.node node-b");
    refused(
        "create a sub-claim for node-b",
        () -> nodeA.resource(subClaim("10.40.3.18", "node-b", name(shared))).create(),
        writeBlocks);
    for (IPBlock theirs : List.of(block, subClaim)) {
      refused(
          "change " + name(theirs),
          () -> nodeA.resources(IPBlock.class).withName(name(theirs)).edit(this::touched),
          changeBlocks
              + " (or a slot Shared from birth, without spec.node); IPBlock "
              + name(theirs)
              + " has spec.node node-b");
      refused(
          "write the status of " + name(theirs),
          () ->
              nodeA
                  .resources(IPBlock.class)
                  .withName(name(theirs))
                  .subresource("status")
                  .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"allocated\":0}}"),
          changeBlocks);
      refused("delete " + name(theirs), () -> nodeA.resource(theirs).delete(), changeBlocks);
    }
    for (IPAddress theirs : addresses) {
      String where = theirs.getMetadata().getNamespace();
      refused(
          "create an address for node-b in " + where,
          () -> nodeA.resource(address(where, "10.40.3.100", "node-b")).create(),
          "kipam-node of node node-a may only write IPAddresses whose spec.node is node-a");
      refused(
          "delete " + where + "/" + name(theirs),
          () -> nodeA.resource(theirs).delete(),
          notYours(where, theirs));
      // A daemon patches its own IPAddresses (the finalizer kipam.io/attachment), never another
      // node's: the policy refuses.
      refused(
          "change " + where + "/" + name(theirs),
          () -> nodeA.resource(theirs).edit(this::touched),
          notYours(where, theirs));
    }

    assertThat(admin.resources(IPBlock.class).withName(name(block)).get().getSpec().getNode())
        .isEqualTo("node-b");
    for (IPAddress theirs : addresses) {
      assertThat(admin.resource(theirs).get()).as("still there").isNotNull();
    }
  }

  @Test
  void aTokenBoundToNoNodeWritesNothing() {
    KubernetesClient unbound = clientWith(token());
    String rule =
        "kipam-node may write IPBlocks and IPAddresses only with a service-account token bound to"
            + " a Node or to a Pod on a Node";
    refused(
        "create a block without a node name",
        () -> unbound.resource(slot("10.40.5.0/28", "node-a")).create(),
        rule);
    refused(
        "create an address without a node name",
        () -> unbound.resource(address(NAMESPACES.get(0), "10.40.5.20", "node-a")).create(),
        rule);
    IPBlock own = nodeA.resource(slot("10.40.5.16/28", "node-a")).create();
    refused("delete a block without a node name", () -> unbound.resource(own).delete(), rule);
    assertThat(unbound.resources(IPBlock.class).withName(name(own)).get())
        .as("reads are not the policy's business")
        .isNotNull();
  }

  @Test
  void aNodeCreatesOnlyTheClaimsOfStatefulSetPodsLabelledWithItsNode() {
    String ns = NAMESPACES.get(2);
    String network = "stable";
    IPAMClaim own =
        nodeA
            .resource(stsClaim(ns, "web-0." + network, network, "node-a", "web", "StatefulSet"))
            .create();
    assertThat(own.getMetadata().getUid()).isNotNull();
    refused(
        "create a claim labelled with node-b",
        () ->
            nodeA
                .resource(stsClaim(ns, "web-1." + network, network, "node-b", "web", "StatefulSet"))
                .create(),
        "kipam-node may create only IPAMClaims labelled kipam.io/node with the node its token is"
            + " bound to (node-a)");
    refused(
        "create a claim owned by a Deployment",
        () ->
            nodeA
                .resource(stsClaim(ns, "web-2." + network, network, "node-a", "web", "Deployment"))
                .create(),
        "kipam-node may create only the IPAMClaims of StatefulSet pods");
    refused(
        "create a claim of another StatefulSet's name",
        () ->
            nodeA
                .resource(stsClaim(ns, "db-0." + network, network, "node-a", "web", "StatefulSet"))
                .create(),
        "does not fit StatefulSet web");
    refused(
        "create a claim of another network's name",
        () ->
            nodeA
                .resource(stsClaim(ns, "web-3.other", network, "node-a", "web", "StatefulSet"))
                .create(),
        "does not fit StatefulSet web");
    // A claim as KubeVirt makes it, by another user, is not the policy's business.
    IPAMClaim vm = new IPAMClaim();
    vm.getMetadata().setName("vm-a." + network);
    vm.getMetadata().setNamespace(ns);
    vm.setSpec(new IPAMClaimSpec(network, "net1"));
    assertThat(admin.resource(vm).create().getMetadata().getUid()).isNotNull();
  }

  private static IPAMClaim stsClaim(
      String namespace, String name, String network, String node, String set, String ownerKind) {
    IPAMClaim claim = new IPAMClaim();
    claim.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(namespace)
            .addToLabels("kipam.io/node", node)
            .addToLabels("kipam.io/statefulset", set)
            .addNewOwnerReference()
            .withApiVersion("apps/v1")
            .withKind(ownerKind)
            .withName(set)
            .withUid(UUID.randomUUID().toString())
            .withController(true)
            .endOwnerReference()
            .build());
    claim.setSpec(new IPAMClaimSpec(network, "eth0"));
    return claim;
  }

  @Test
  void otherUsersAreNotLookedAt() {
    IPBlock theirs = nodeB.resource(slot("10.40.6.0/28", "node-b")).create();
    KubernetesClient operator =
        clientWith(
            controlPlane.kubectl("create", "token", "kipam-operator", "-n", "kipam-system").trim());
    // The operator takes blocks back from any node; it is not a node.
    assertThat(operator.resource(theirs).delete()).hasSize(1);
    IPBlock admins = admin.resource(slot("10.40.6.16/28", "node-b")).create();
    assertThat(admin.resource(admins).delete()).hasSize(1);
  }

  private void refused(String what, ThrowingCallable write, String message) {
    assertThatThrownBy(write)
        .as(what)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as("HTTP status of %s", what).isIn(403, 422);
              assertThat(e.getMessage()).as(what).contains(message);
            });
  }

  private <T extends HasMetadata> T touched(T object) {
    object.getMetadata().getLabels().put("touched", "yes");
    return object;
  }

  private String token(String... bound) {
    List<String> args =
        new ArrayList<>(List.of("create", "token", "kipam-node", "-n", "kipam-system"));
    args.addAll(List.of(bound));
    return controlPlane.kubectl(args.toArray(String[]::new)).trim();
  }

  private KubernetesClient clientWith(String token) {
    KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder(controlPlane.adminConfig()).withOauthToken(token).build())
            .build();
    opened.add(client);
    return client;
  }

  private static IPBlock slot(String cidr, String node) {
    return TestBlocks.slot(POOL, cidr, node);
  }

  /** A slot Shared from birth, labelled with the node whose daemon claims it. */
  private static IPBlock sharedFromBirth(String cidr, String creator) {
    IPBlock slot = slot(cidr, null);
    slot.getMetadata().getLabels().put("kipam.io/created-by", creator);
    return slot;
  }

  private static IPBlock subClaim(String address, String node, String parent) {
    return TestBlocks.subClaim(POOL, address, node, parent);
  }

  private static IPAddress address(String namespace, String ip, String node) {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(POOL, IpAddress.parse(ip)))
            .withNamespace(namespace)
            .addToLabels("kipam.io/pool", POOL)
            .addToLabels("kipam.io/node", node)
            .build());
    // The slot it lies in, as the daemon labels it.
    Cidr block = Cidr.enclosing(IpAddress.parse(ip), 28);
    address.getMetadata().getLabels().put("kipam.io/block", ResourceNames.blockLabel(block));
    PodReference pod =
        new PodReference("web-" + ip.replace('.', '-'), UUID.randomUUID().toString());
    address.setSpec(TestAddresses.spec(POOL, block.toString(), ip, node, pod, 'b'));
    return address;
  }

  private static String name(HasMetadata object) {
    return object.getMetadata().getName();
  }

  /** The policy's refusal of node-a's change or delete of node-b's IPAddress {@code theirs}. */
  private static String notYours(String where, IPAddress theirs) {
    return "kipam-node of node node-a may only change or delete IPAddresses whose spec.node is"
        + " node-a; IPAddress "
        + where
        + "/"
        + name(theirs)
        + " has spec.node node-b";
  }
}
