package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What one node's credentials can do to another node's objects, as an attacker holding them would
 * try it: kipam installed from config/default (RBAC and every admission policy), real
 * service-account tokens bound to each Node, as kube-apiserver gives them to the daemons. Which
 * node attacks, which is attacked and which namespaces hold what are drawn from a seed printed
 * first ({@code -Dkipam.seed=N} replays a run).
 */
@WithControlPlane
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeThreatsIT extends NodeAttacks {

  private static final String POOL = "threat-" + Long.toString(System.nanoTime() % 100_000, 36);
  private static final List<String> NAMESPACES =
      List.of(POOL + "-red", POOL + "-green", POOL + "-blue");

  NodeThreatsIT() {
    super(POOL);
  }

  /** One attempt of the table: what it tries, the write, and the words of the rule refusing it. */
  private record Attempt(String what, ThrowingCallable write, String rule) {}

  @BeforeAll
  void install() {
    installForThreeNodes(NAMESPACES, "10.44");
    KipamCrds.installIpamClaims(admin);
  }

  @AfterAll
  void cleanUp() {
    closeAndRemove(NAMESPACES, List.of(POOL));
  }

  @Test
  void everyWriteOfOneNodeToAnotherNodesOrSharedObjectsIsRefusedNamingTheRule() {
    // The attacked node's objects, written with its own token as its daemon writes them.
    IPBlock theirSlot = victimClient.resource(protectedSlot("10.44.1.0/28", victim)).create();
    IPBlock shared = victimClient.resource(sharedFromBirth("10.44.1.16/28", victim)).create();
    victimClient
        .resources(IPBlock.class)
        .withName(name(shared))
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"mode\":\"Shared\"}}");
    IPBlock theirSubClaim =
        victimClient.resource(subClaim("10.44.1.17", victim, name(shared))).create();
    IPBlock claimed =
        victimClient
            .resource(claimSubClaim("10.44.1.18", name(shared), NAMESPACES.get(0)))
            .create();
    List<IPAddress> theirAddresses = new ArrayList<>();
    for (int i = 0; i < NAMESPACES.size(); i++) {
      theirAddresses.add(
          victimClient
              .resource(address(NAMESPACES.get(i), "10.44.1." + (2 + i), victim, "10.44.1.0/28"))
              .create());
    }
    IPBlock ownSlot = attackerClient.resource(protectedSlot("10.44.2.0/28", attacker)).create();
    IPAddress ownAddress =
        attackerClient
            .resource(address(NAMESPACES.get(1), "10.44.2.2", attacker, "10.44.2.0/28"))
            .create();

    String ns = NAMESPACES.get(random.nextInt(NAMESPACES.size()));
    IPAddress theirs = theirAddresses.get(random.nextInt(theirAddresses.size()));
    String me = "kipam-node of node " + attacker;
    List<Attempt> attempts = new ArrayList<>();
    attempts.add(
        new Attempt(
            "claim a slot for " + victim,
            () -> attackerClient.resource(slot("10.44.3.0/28", victim)).create(),
            me + " may only write IPBlocks whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "relabel " + victim + "'s slot",
            () -> attackerClient.resource(fresh(theirSlot)).edit(NodeThreatsIT::touched),
            me + " may only change or delete IPBlocks whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "answer the release handshake of " + victim + "'s slot",
            () ->
                status(
                    attackerClient, theirSlot, "{\"status\":{\"release\":{\"state\":\"Ready\"}}}"),
            me + " may only change or delete IPBlocks whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "delete " + victim + "'s slot",
            () -> attackerClient.resource(theirSlot).delete(),
            me + " may only change or delete IPBlocks whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "sub-claim an address of a Shared slot for " + victim,
            () -> attackerClient.resource(subClaim("10.44.1.20", victim, name(shared))).create(),
            me + " may only write IPBlocks whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "give back " + victim + "'s sub-claim",
            () -> attackerClient.resource(theirSubClaim).delete(),
            me + " may only change or delete IPBlocks whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "write an IPAddress for " + victim + " in " + ns,
            () ->
                attackerClient.resource(address(ns, "10.44.1.9", victim, "10.44.1.0/28")).create(),
            me + " may only write IPAddresses whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "delete " + victim + "'s IPAddress in " + theirs.getMetadata().getNamespace(),
            () -> attackerClient.resource(theirs).delete(),
            me + " may only change or delete IPAddresses whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "strip kipam.io/attachment from " + victim + "'s IPAddress",
            () -> attackerClient.resource(fresh(theirs)).edit(NodeAttacks::withoutFinalizers),
            me + " may only change or delete IPAddresses whose spec.node is " + attacker));
    attempts.add(
        new Attempt(
            "strip the finalizer of a Shared slot",
            () -> attackerClient.resource(fresh(shared)).edit(NodeAttacks::withoutFinalizers),
            me
                + " may not change the finalizers, labels or annotations of IPBlock "
                + name(shared)));
    attempts.add(
        new Attempt(
            "delete a Shared slot",
            () -> attackerClient.resource(shared).delete(),
            me + " may not delete IPBlock " + name(shared) + ", a Shared slot without spec.node"));
    attempts.add(
        new Attempt(
            "write status.release of a Shared slot",
            () ->
                status(
                    attackerClient,
                    shared,
                    "{\"status\":{\"release\":{\"state\":\"Ready\",\"requestedAt\":\"x\"}}}"),
            me
                + " may write the status of IPBlock "
                + name(shared)
                + ", which has no spec.node, only once"));
    attempts.add(
        new Attempt(
            "write status.share of a Shared slot",
            () ->
                status(attackerClient, shared, "{\"status\":{\"share\":{\"requestedAt\":\"x\"}}}"),
            "status.release and status.share are kipam-operator's"));
    attempts.add(
        new Attempt(
            "strip the finalizer of an IPAMClaim's sub-claim",
            () -> attackerClient.resource(fresh(claimed)).edit(NodeAttacks::withoutFinalizers),
            me
                + " may not change the finalizers, labels or annotations of IPBlock "
                + name(claimed)));
    attempts.add(
        new Attempt(
            "sub-claim an address of " + victim + "'s Exclusive slot",
            () ->
                attackerClient.resource(subClaim("10.44.1.2", attacker, name(theirSlot))).create(),
            "node "
                + attacker
                + " may not sub-claim 10.44.1.2/32 under slot "
                + name(theirSlot)
                + ": the slot is Exclusive to node "
                + victim));
    attempts.add(
        new Attempt(
            "an IPAddress of its own labelled kipam.io/node " + victim,
            () ->
                attackerClient
                    .resource(
                        relabelled(
                            address(ns, "10.44.2.5", attacker, "10.44.2.0/28"),
                            ApiConstants.LABEL_NODE,
                            victim))
                    .create(),
            me + ": the label kipam.io/node of IPAddress " + ns));
    attempts.add(
        new Attempt(
            "a slot of its own labelled kipam.io/node " + victim,
            () ->
                attackerClient
                    .resource(
                        relabelled(slot("10.44.4.0/28", attacker), ApiConstants.LABEL_NODE, victim))
                    .create(),
            me + ": the label kipam.io/node of IPBlock"));
    attempts.add(
        new Attempt(
            "a slot of its own labelled with another pool",
            () ->
                attackerClient
                    .resource(
                        relabelled(
                            slot("10.44.5.0/28", attacker), ApiConstants.LABEL_POOL, "other"))
                    .create(),
            me + ": the label kipam.io/pool of IPBlock"));
    attempts.add(
        new Attempt(
            "a sub-claim without the label kipam.io/parent (out of the sub-claim policy's sight)",
            () ->
                attackerClient
                    .resource(
                        unlabelled(
                            subClaim("10.44.1.3", attacker, name(theirSlot)),
                            ApiConstants.LABEL_PARENT))
                    .create(),
            "carries the label kipam.io/parent exactly when it has spec.parent"));
    attempts.add(
        new Attempt(
            "strip kipam.io/block-protection from its own slot that is not being deleted",
            () -> attackerClient.resource(fresh(ownSlot)).edit(NodeAttacks::withoutFinalizers),
            me
                + " removes the finalizer kipam.io/block-protection only from an object being deleted"));
    attempts.add(
        new Attempt(
            "add someone else's finalizer to its own IPAddress",
            () ->
                attackerClient
                    .resource(fresh(ownAddress))
                    .edit(
                        a -> {
                          a.getMetadata().getFinalizers().add("example.com/backup");
                          return a;
                        }),
            me + " may add or remove only the finalizer kipam.io/attachment"));
    attempts.add(
        new Attempt(
            "record demand on Node " + victim,
            () -> demand(attackerClient, victim, POOL),
            "kipam-node may change only the Node its service-account token is bound to ("
                + attacker
                + "), not Node "
                + victim));
    attempts.add(
        new Attempt(
            "change a label of its own Node",
            () ->
                attackerClient
                    .nodes()
                    .withName(attacker)
                    .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"metadata\":{\"labels\":{\"kipam.io/pools\":\"all\"}}}"),
            me + " may change only the annotation kipam.io/demand of its Node"));
    attempts.add(
        new Attempt(
            "create an IPAMClaim labelled with " + victim,
            () -> attackerClient.resource(statefulSetClaim(ns, victim)).create(),
            "kipam-node may create only IPAMClaims labelled kipam.io/node with the node its token is"
                + " bound to ("
                + attacker
                + ")"));
    KubernetesClient unbound =
        opened(KipamInstall.serviceAccountClient(controlPlane, "kipam-node"));
    attempts.add(
        new Attempt(
            "write with a token bound to no Node",
            () -> unbound.resource(slot("10.44.6.0/28", attacker)).create(),
            "kipam-node may write IPBlocks and IPAddresses only with a service-account token bound"));
    KubernetesClient operator =
        opened(KipamInstall.serviceAccountClient(controlPlane, "kipam-operator"));
    attempts.add(
        new Attempt(
            "kipam-operator's token: change Node " + victim + "'s CPU capacity",
            () ->
                operator
                    .nodes()
                    .withName(victim)
                    .subresource("status")
                    .patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"status\":{\"capacity\":{\"cpu\":\"512\"}}}"),
            "kipam-operator may change only kipam.io/ip and ip.kipam.io/* in the capacity and"
                + " allocatable of Node "
                + victim
                + ", not cpu"));
    Collections.shuffle(attempts, random);

    System.out.println(
        "| # | attempt with " + attacker + "'s token | HTTP | refused by the rule |");
    System.out.println("| --- | --- | --- | --- |");
    for (int i = 0; i < attempts.size(); i++) {
      Attempt attempt = attempts.get(i);
      KubernetesClientException refusal = refusal(attempt);
      System.out.printf(
          "| %d | %s | %d | %s |%n",
          i + 1, attempt.what(), refusal.getCode(), rule(refusal.getMessage()));
    }
    assertThat(attempts).hasSizeGreaterThanOrEqualTo(15);

    // Nothing of the attacked node's changed.
    assertThat(admin.resource(theirSlot).get().getMetadata().getLabels())
        .doesNotContainKey("touched");
    assertThat(admin.resource(shared).get().getMetadata().getFinalizers())
        .containsExactly(ApiConstants.FINALIZER_BLOCK_PROTECTION);
    assertThat(admin.resource(shared).get().getMetadata().getDeletionTimestamp()).isNull();
    assertThat(admin.resource(theirSubClaim).get()).isNotNull();
    for (IPAddress address : theirAddresses) {
      assertThat(admin.resource(address).get().getMetadata().getFinalizers())
          .containsExactly(ApiConstants.FINALIZER_ATTACHMENT);
    }

    ownWritesStillPass(ownSlot, ownAddress, shared, operator);
  }

  /** The attacker's own node's writes, each as its daemon makes it. */
  private void ownWritesStillPass(
      IPBlock ownSlot, IPAddress ownAddress, IPBlock shared, KubernetesClient operator) {
    IPBlock ownSubClaim =
        attackerClient.resource(subClaim("10.44.2.2", attacker, name(ownSlot))).create();
    IPBlock sharedSubClaim =
        attackerClient.resource(subClaim("10.44.1.21", attacker, name(shared))).create();
    status(attackerClient, ownSlot, "{\"status\":{\"allocated\":2}}");
    IPBlock newShared = attackerClient.resource(sharedFromBirth("10.44.7.0/28", attacker)).create();
    status(attackerClient, newShared, "{\"status\":{\"mode\":\"Shared\"}}");
    demand(attackerClient, attacker, POOL);
    operator
        .nodes()
        .withName(attacker)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"capacity\":{\"kipam.io/ip\":\"13\"},\"allocatable\":{\"kipam.io/ip\":\"13\"}}}");
    attackerClient.resource(ownAddress).delete();
    attackerClient.resource(fresh(ownAddress)).edit(NodeAttacks::withoutFinalizers);
    assertThat(admin.resource(ownAddress).get()).as("gone once its attachment is over").isNull();
    attackerClient.resource(ownSubClaim).delete();
    attackerClient.resource(sharedSubClaim).delete();
    attackerClient.resource(ownSlot).delete();
    attackerClient.resource(fresh(ownSlot)).edit(NodeAttacks::withoutFinalizers);
    assertThat(admin.resource(ownSlot).get()).as("own slot given back").isNull();
    System.out.println(
        attacker
            + "'s own writes passed: a sub-claim under its slot and under a Shared slot, its slot's"
            + " status, a slot Shared from birth and its mode, its demand, kipam.io/ip by"
            + " kipam-operator, an IPAddress deleted and its finalizer removed, its slot given back");
  }

  /**
   * The sequence that made two honest nodes hand out one address: an attacking node sub-claims an
   * address the holder's pod uses under the holder's Exclusive slot, waits for the slot to turn
   * Shared, gives its sub-claim back, and a third node takes the address for a pod in another
   * namespace. Refused at its first step; the conversion then goes as the daemons carry it out, and
   * every address is held once.
   */
  @Test
  void twoHonestNodesOneAddressIsRefusedAtTheFirstStep() {
    int third = 10 + random.nextInt(200);
    Cidr slotCidr = Cidr.parse("10.45." + third + ".0/28");
    List<String> namespaces = new ArrayList<>(NAMESPACES);
    Collections.shuffle(namespaces, random);
    String used = "10.45." + third + "." + (1 + random.nextInt(6));
    String free = "10.45." + third + "." + (8 + random.nextInt(6));

    IPBlock slot = victimClient.resource(protectedSlot(slotCidr.toString(), victim)).create();
    IPAddress held =
        victimClient
            .resource(address(namespaces.get(0), used, victim, slotCidr.toString()))
            .create();
    System.out.println(
        "1. "
            + victim
            + " holds slot "
            + slotCidr
            + " Exclusive; its pod in "
            + namespaces.get(0)
            + " uses "
            + used);

    KubernetesClientException first =
        refusal(
            new Attempt(
                attacker + " sub-claims " + used + " under " + victim + "'s slot",
                () -> attackerClient.resource(subClaim(used, attacker, name(slot))).create(),
                "may not sub-claim " + used + "/32 under slot " + name(slot)));
    System.out.println(
        "2. "
            + attacker
            + " sub-claims "
            + used
            + ": HTTP "
            + first.getCode()
            + ", "
            + rule(first.getMessage()));

    // kipam-operator asks for the conversion; the holder sub-claims what its pod uses, then
    // writes the mode (design 5a), with its own token.
    status(
        admin,
        slot,
        "{\"status\":{\"share\":{\"requestedAt\":\"2026-11-27T00:00:00Z\",\"reason\":\"test\"}}}");
    victimClient.resource(subClaim(used, victim, name(slot))).create();
    status(victimClient, slot, "{\"status\":{\"mode\":\"Shared\"}}");
    System.out.println(
        "3. " + victim + " converted " + slotCidr + " to Shared, sub-claiming " + used);

    assertThatThrownBy(() -> attackerClient.resource(subClaim(used, attacker, name(slot))).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThatThrownBy(
            () -> attackerClient.resources(IPBlock.class).withName(subClaimName(used)).delete())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
    assertThatThrownBy(() -> thirdClient.resource(subClaim(used, this.third, name(slot))).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    System.out.println(
        "4. "
            + attacker
            + " and "
            + this.third
            + " sub-claim "
            + used
            + ": 409, it is "
            + victim
            + "'s; "
            + attacker
            + " may not give it back (403)");
    // The Shared slot serves the third node's pod with a free address, in another namespace.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> thirdClient.resource(subClaim(free, this.third, name(slot))).dryRun().create());
    thirdClient.resource(subClaim(free, this.third, name(slot))).create();
    thirdClient
        .resource(address(namespaces.get(1), free, this.third, slotCidr.toString()))
        .create();
    System.out.println(
        "5. " + this.third + " sub-claims the free " + free + " for a pod in " + namespaces.get(1));

    Map<String, List<String>> holders =
        admin.resources(IPAddress.class).inAnyNamespace().list().getItems().stream()
            .filter(a -> POOL.equals(a.getSpec().getPool()))
            .collect(
                Collectors.groupingBy(
                    a -> a.getSpec().getIp(),
                    Collectors.mapping(a -> a.getMetadata().getNamespace(), Collectors.toList())));
    Map<String, List<String>> twice =
        holders.entrySet().stream()
            .filter(e -> e.getValue().size() > 1)
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    System.out.println("addresses held twice: " + twice.keySet());
    assertThat(twice).isEmpty();
    assertThat(
            admin.resources(IPBlock.class).withName(subClaimName(used)).get().getSpec().getNode())
        .isEqualTo(victim);
    assertThat(admin.resource(held).get()).isNotNull();
  }

  private KubernetesClientException refusal(Attempt attempt) {
    KubernetesClientException[] caught = new KubernetesClientException[1];
    assertThatThrownBy(attempt.write())
        .as(attempt.what())
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as("HTTP status of %s", attempt.what()).isEqualTo(403);
              assertThat(e.getMessage()).as(attempt.what()).contains(attempt.rule());
              caught[0] = e;
            });
    return caught[0];
  }

  /** The policy and its message, out of the API server's answer. */
  private static String rule(String message) {
    int denied = message.indexOf("ValidatingAdmissionPolicy '");
    String from = denied >= 0 ? message.substring(denied) : message;
    int end = from.indexOf(". Received status");
    return (end >= 0 ? from.substring(0, end) : from).replace('|', '/');
  }

  private static String subClaimName(String address) {
    return ResourceNames.subClaimName(POOL, IpAddress.parse(address));
  }

  /** The sub-claim of an IPAMClaim's address, as kipam-node makes it: no node, the claim's UID. */
  private IPBlock claimSubClaim(String address, String parent, String namespace) {
    return TestBlocks.claimSubClaim(POOL, address, parent, namespace, "vm-a.pods", victim);
  }

  private static IPAMClaim statefulSetClaim(String namespace, String node) {
    IPAMClaim claim = new IPAMClaim();
    claim.setMetadata(
        new ObjectMetaBuilder()
            .withName("web-0.pods")
            .withNamespace(namespace)
            .addToLabels("kipam.io/node", node)
            .addToLabels("kipam.io/statefulset", "web")
            .addNewOwnerReference()
            .withApiVersion("apps/v1")
            .withKind("StatefulSet")
            .withName("web")
            .withUid(UUID.randomUUID().toString())
            .withController(true)
            .endOwnerReference()
            .build());
    claim.setSpec(new IPAMClaimSpec("pods", "eth0"));
    return claim;
  }

  private static <T extends HasMetadata> T touched(T object) {
    object.getMetadata().getLabels().put("touched", "yes");
    return object;
  }
}
