package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Objects a node's credentials could forge so that they look like, or lean on, another node's: each
 * one that an attacking node was once admitted to write (issue 52), as that node's daemon token
 * writes it, refused with the rule that stops it; beside each, the node's own write of the same
 * shape, admitted. kipam is installed from config/default; the tokens are bound to Nodes as
 * kube-apiserver binds the daemons'. Which node attacks is drawn from a seed printed first ({@code
 * -Dkipam.seed=N} replays a run).
 */
@WithControlPlane
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeForgeriesIT extends NodeAttacks {

  private static final String POOL = "forge-" + Long.toString(System.nanoTime() % 100_000, 36);
  private static final String OTHER_POOL = POOL + "-b";
  private static final List<String> NAMESPACES = List.of(POOL + "-red", POOL + "-green");

  NodeForgeriesIT() {
    super(POOL);
  }

  private KubernetesClient operator;

  @BeforeAll
  void install() {
    installForThreeNodes(NAMESPACES, "10.46");
    operator = opened(KipamInstall.serviceAccountClient(controlPlane, "kipam-operator"));
  }

  @AfterAll
  void cleanUp() {
    closeAndRemove(NAMESPACES, List.of(POOL, OTHER_POOL));
  }

  /**
   * A block under a free slot's name whose spec.cidr is another node's slot: the daemon that
   * believes the name hands out the other node's addresses, and the real slot's name is taken.
   */
  @Test
  void aBlockWhoseNameIsNotItsCidrsIsRefused() {
    IPBlock theirs = victimClient.resource(slot("10.46.1.0/28", victim)).create();
    String rule = "must be its pool's name, '.' and the block label of its spec.cidr";

    refusedSlot(
        "a block named for free slot 10.46.1.16/28 holding " + victim + "'s 10.46.1.0/28",
        "10.46.1.16/28",
        b -> b.getSpec().setCidr(theirs.getSpec().getCidr()),
        rule);
    refusedSlot(
        "a block named for fd00:46::10/124 holding fd00:46::/124",
        "fd00:46::10/124",
        b -> b.getSpec().setCidr("fd00:46::/124"),
        rule);
    refusedSlot(
        "a block named with a non-canonical encoding of its CIDR",
        "fd00:46::20/124",
        b -> b.getMetadata().setName(POOL + ".fd00-046-0-0-0-0-0-20-124"),
        rule);
    refusedSlot(
        "a block named for another pool",
        "10.46.1.32/28",
        b -> b.getMetadata().setName(OTHER_POOL + ".10-46-1-32-28"),
        rule);

    attackerClient.resource(slot("10.46.1.48/28", attacker)).create();
    attackerClient.resource(slot("fd00:46::30/124", attacker)).create();
    attackerClient.resource(slot("fd00:46:0:1::/64", attacker)).create();
    attackerClient
        .resource(subClaim("fd00:46::31", attacker, name(slot("fd00:46::30/124", attacker))))
        .create();
    System.out.println(
        attacker + "'s own slots (IPv4, IPv6 /124 and /64) and an IPv6 sub-claim were admitted");
    assertThat(admin.resources(IPBlock.class).withName(name(slot("10.46.1.16/28", attacker))).get())
        .isNull();
  }

  /** An IPAddress labelled with another node's block pins that block: it can never be released. */
  @Test
  void anAddressLabelledWithABlockItsNodeDoesNotHoldIsRefused() {
    IPBlock theirs = victimClient.resource(slot("10.46.2.0/28", victim)).create();
    victimClient.resource(address(NAMESPACES.get(0), "10.46.2.2", victim, "10.46.2.0/28")).create();
    IPBlock own = attackerClient.resource(slot("10.46.3.0/28", attacker)).create();

    refused(
        "an IPAddress of " + victim + "'s free 10.46.2.5 labelled with " + victim + "'s block",
        () ->
            attackerClient
                .resource(address(NAMESPACES.get(1), "10.46.2.5", attacker, "10.46.2.0/28"))
                .create(),
        "kipam-node of node "
            + attacker
            + " may not name IPBlock "
            + name(theirs)
            + " in kipam.io/block of an IPAddress: it is held by node "
            + victim);
    refused(
        "an IPAddress of 10.46.2.6 labelled with its own block 10.46.3.0/28",
        () ->
            attackerClient
                .resource(
                    relabelled(
                        address(NAMESPACES.get(1), "10.46.2.6", attacker, "10.46.2.0/28"),
                        ApiConstants.LABEL_BLOCK,
                        "10-46-3-0-28"))
                .create(),
        "the label kipam.io/block of IPAddress");
    refused(
        "an IPAddress without the label kipam.io/block",
        () ->
            attackerClient
                .resource(
                    unlabelled(
                        address(NAMESPACES.get(1), "10.46.3.7", attacker, "10.46.3.0/28"),
                        ApiConstants.LABEL_BLOCK))
                .create(),
        "the label kipam.io/block of IPAddress");

    attackerClient
        .resource(address(NAMESPACES.get(1), "10.46.3.2", attacker, "10.46.3.0/28"))
        .create();
    IPBlock sub = attackerClient.resource(subClaim("10.46.3.3", attacker, name(own))).create();
    attackerClient
        .resource(address(NAMESPACES.get(1), "10.46.3.3", attacker, sub.getSpec().getCidr()))
        .create();
    System.out.println(
        attacker + "'s own addresses in its slot and in its sub-claim were admitted");
  }

  /**
   * A claim's sub-claim has no spec.node; once any node could delete it, another namespace's pod
   * got the claim's address while the claim existed.
   */
  @Test
  void aClaimsSubClaimIsDeletedOnlyByTheNodeThatMadeIt() {
    IPBlock shared = victimClient.resource(sharedFromBirth("10.46.4.0/28", victim)).create();
    status(victimClient, shared, "{\"status\":{\"mode\":\"Shared\"}}");
    IPBlock claimed =
        victimClient
            .resource(claimSubClaim("10.46.4.3", name(shared), NAMESPACES.get(0), victim))
            .create();

    refused(
        "delete " + victim + "'s claim sub-claim",
        () -> attackerClient.resource(claimed).delete(),
        "kipam-node of node "
            + attacker
            + " may not delete IPBlock "
            + name(claimed)
            + ": it was created by node "
            + victim);
    refused(
        "a claim sub-claim labelled as made by " + victim,
        () ->
            attackerClient
                .resource(claimSubClaim("10.46.4.4", name(shared), NAMESPACES.get(1), victim))
                .create(),
        "must carry the label kipam.io/created-by " + attacker);
    refused(
        "a claim sub-claim without a creator",
        () ->
            attackerClient
                .resource(claimSubClaim("10.46.4.5", name(shared), NAMESPACES.get(1), null))
                .create(),
        "must carry the label kipam.io/created-by " + attacker);
    refused(
        "a slot Shared from birth labelled as made by " + victim,
        () -> attackerClient.resource(sharedFromBirth("10.46.4.16/28", victim)).create(),
        "must carry the label kipam.io/created-by " + attacker);
    refused(
        "relabel " + victim + "'s claim sub-claim as its own",
        () ->
            attackerClient
                .resource(fresh(claimed))
                .edit(b -> relabelled(b, ApiConstants.LABEL_CREATED_BY, attacker)),
        // kipam-labels-immutable or the node policy, whichever answers first: both name it.
        "IPBlock " + name(claimed));
    assertThat(admin.resource(claimed).get().getMetadata().getDeletionTimestamp()).isNull();

    IPBlock own =
        attackerClient
            .resource(claimSubClaim("10.46.4.6", name(shared), NAMESPACES.get(1), attacker))
            .create();
    attackerClient.resource(own).delete();
    victimClient.resource(claimed).delete();
    assertThat(admin.resource(claimed).get().getMetadata().getDeletionTimestamp()).isNotNull();
    System.out.println(
        "each node deleted the claim sub-claim it made; "
            + attacker
            + " could not delete "
            + victim
            + "'s");
  }

  /**
   * A sub-claim under its own slot of an address that lies in another node's slot: the sub-claim
   * policy checked only who holds the slot named as parent.
   */
  @Test
  void aSubClaimOutsideItsParentIsRefused() {
    IPBlock own = attackerClient.resource(slot("10.46.5.0/28", attacker)).create();
    victimClient.resource(slot("10.46.6.0/28", victim)).create();
    victimClient.resource(address(NAMESPACES.get(0), "10.46.6.3", victim, "10.46.6.0/28")).create();
    String inside = "must lie inside its parent";

    refused(
        "sub-claim " + victim + "'s pod's 10.46.6.3 under its own slot 10.46.5.0/28",
        () -> attackerClient.resource(subClaim("10.46.6.3", attacker, name(own))).create(),
        inside);
    refused(
        "sub-claim 10.46.6.4 under a slot 10.46.8.0/28 that does not exist",
        () ->
            attackerClient
                .resource(subClaim("10.46.6.4", attacker, POOL + ".10-46-8-0-28"))
                .create(),
        inside);
    attackerClient.resource(subClaim("10.46.5.3", attacker, name(own))).create();
    System.out.println(attacker + "'s own sub-claim under its own slot was admitted");
  }

  /**
   * The former holder of a converted slot kept spec.node, so the node policy let it delete the slot
   * and strip its finalizer while other nodes' sub-claims sat under it.
   */
  @Test
  void aConvertedSharedSlotIsLetGoOnlyByKipamOperator() {
    IPBlock slot = victimClient.resource(protectedSlot("10.46.9.0/28", victim)).create();
    victimClient.resource(address(NAMESPACES.get(0), "10.46.9.2", victim, "10.46.9.0/28")).create();
    status(
        admin,
        slot,
        "{\"status\":{\"share\":{\"requestedAt\":\"2026-11-27T00:00:00Z\",\"reason\":\"test\"}}}");
    victimClient.resource(subClaim("10.46.9.2", victim, name(slot))).create();
    status(victimClient, slot, "{\"status\":{\"mode\":\"Shared\"}}");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> thirdClient.resource(subClaim("10.46.9.5", third, name(slot))).dryRun().create());
    thirdClient.resource(subClaim("10.46.9.5", third, name(slot))).create();
    String strip = "may not change the finalizers, labels or annotations of IPBlock " + name(slot);

    refused(
        "delete its converted slot, " + third + "'s sub-claim under it",
        () -> victimClient.resource(slot).delete(),
        "kipam-node of node "
            + victim
            + " may not delete IPBlock "
            + name(slot)
            + ", a Shared slot (converted from node "
            + victim
            + "'s): kipam-operator lets a Shared slot go");
    assertThat(admin.resource(slot).get().getMetadata().getDeletionTimestamp()).isNull();
    status(victimClient, slot, "{\"status\":{\"allocated\":1}}");

    // kipam-operator marks it terminating to list its sub-claims afresh; meanwhile the former
    // holder strips the finalizer that keeps it until that check is done.
    operator.resource(slot).delete();
    assertThat(admin.resource(slot).get().getMetadata().getDeletionTimestamp()).isNotNull();
    refused(
        "strip the finalizer of its converted slot being deleted, "
            + third
            + "'s sub-claim under it",
        () -> victimClient.resource(fresh(slot)).edit(NodeAttacks::withoutFinalizers),
        strip);
    assertThat(admin.resource(slot).get()).as("kept by its finalizer").isNotNull();
    System.out.println(
        victim
            + " wrote its converted slot's status; only kipam-operator could delete the slot and"
            + " its finalizer stayed");
  }

  /** The attacker's slot of {@code cidr}, forged by {@code forge}, is refused by {@code rule}. */
  private void refusedSlot(String what, String cidr, Consumer<IPBlock> forge, String rule) {
    IPBlock forged = slot(cidr, attacker);
    forge.accept(forged);
    refused(what, () -> attackerClient.resource(forged).create(), rule);
  }

  private void refused(String what, ThrowingCallable write, String rule) {
    assertThatThrownBy(write)
        .as(what)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as("HTTP status of %s", what).isEqualTo(403);
              assertThat(e.getMessage()).as(what).contains(rule);
              System.out.println("refused: " + what + ": " + rule(e.getMessage()));
            });
  }

  /** The policy and its message, out of the API server's answer. */
  private static String rule(String message) {
    int denied = message.indexOf("ValidatingAdmissionPolicy '");
    String from = denied >= 0 ? message.substring(denied) : message;
    int end = from.indexOf(". Received status");
    return end >= 0 ? from.substring(0, end) : from;
  }

  /** An IPAMClaim's sub-claim as kipam-node of {@code creator} makes it (none: no label). */
  private static IPBlock claimSubClaim(
      String address, String parent, String namespace, String creator) {
    return TestBlocks.claimSubClaim(POOL, address, parent, namespace, "vm-a.pods", creator);
  }
}
