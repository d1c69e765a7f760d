package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.system.harness.ChurnAndSample;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Addresses that outlive their pods (design §5b): an IPAMClaim's address, attached by pods on any
 * node one at a time, kept through pod deletion and re-creation elsewhere, and given back once the
 * claim is deleted and no pod is attached. Three kipam-node processes and kipam-operator as a
 * process; ordinary pods churn in three namespaces through the same pool all along, and every
 * IPAddress of the pool is sampled throughout for an address held twice.
 *
 * <p>Seeded ({@code -Dkipam.seed=N} replays a run): which namespace the claim is in, which node
 * each attachment lands on, and where the kills land.
 */
class PersistentAddressIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final Duration RETRIES = Duration.ofSeconds(60);

  /**
   * Its own network per test: a pool of each test has the same CIDR, and an earlier test's
   * addresses may still exist (the pools here are readied by the test, not checked for overlaps by
   * kipam-operator).
   */
  private final String network = Fixtures.uniqueName("tenant");

  private static final String IFNAME = "net1";

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("sticky");
  private List<NodeRig> rigs;
  private final SeededRandom random = new SeededRandom();
  private ChurnAndSample meanwhile;
  private String pool;
  private List<String> namespaces;

  @BeforeEach
  void start() throws Exception {
    random.print("PersistentAddressIT");
    KipamCrds.installIpamClaims(client);
    pool = Cluster.readiedPool(client, "sticky", Cluster.spec("10.209.0.0/24", 28, 0));
    namespaces = processes.namespaces;
    rigs = processes.nodes(pool, 3, Map.of());
    meanwhile = ChurnAndSample.start(client, pool, rigs);
  }

  @AfterEach
  void stopAll() throws Exception {
    ChurnAndSample.check("PersistentAddressIT", meanwhile);
  }

  @Test
  void aClaimKeepsItsAddressAcrossPodsAndNodesAndGoesWithTheClaim() throws Exception {
    String namespace = randomNamespace();
    List<NodeRig> order = shuffledRigs();
    IPAMClaim claim = claim(namespace, "vm-a." + network, network, IFNAME, null);

    Pod first = claimPod(order.get(0), namespace, "vm-a-launcher-1", "vm-a." + network);
    String ip = attach(order.get(0), first, "c-first").ip();
    assertClaimStatus(claim, ip, "vm-a-launcher-1");
    IPAddress attached = addressOf(namespace, ip).orElseThrow();
    assertThat(attached.getSpec().getClaim()).isEqualTo(claim.getMetadata().getName());
    assertThat(attached.getSpec().getNode()).isEqualTo(order.get(0).node);
    assertThat(attached.getMetadata().getOwnerReferences().get(0).getUid())
        .isEqualTo(first.getMetadata().getUid());
    IPBlock subClaim = Cluster.subClaimOf(client, pool, ip).orElseThrow();
    assertThat(subClaim.getSpec().getClaim().getUid()).isEqualTo(claim.getMetadata().getUid());
    assertThat(subClaim.getSpec().getNode()).isNull();
    IPBlock slot = client.resources(IPBlock.class).withName(subClaim.getSpec().getParent()).get();
    assertThat(slot.getSpec().getNode()).as("the parent slot is Shared from birth").isNull();

    // The pod goes: its attachment ends, the claim keeps the address.
    assertThat(call(order.get(0), "DEL", first, "c-first", true).ok()).isTrue();
    client.resource(first).withGracePeriod(0).delete();
    await().atMost(RETRIES).until(() -> addressOf(namespace, ip).isEmpty());
    assertThat(Cluster.subClaimOf(client, pool, ip))
        .as("the claim's sub-claim stays without a pod")
        .isPresent();

    // Re-created on another node, it gets the same address.
    Pod second = claimPod(order.get(1), namespace, "vm-a-launcher-2", "vm-a." + network);
    assertThat(attach(order.get(1), second, "c-second").ip()).isEqualTo(ip);
    assertClaimStatus(claim, ip, "vm-a-launcher-2");
    assertThat(addressOf(namespace, ip).orElseThrow().getSpec().getNode())
        .isEqualTo(order.get(1).node);

    // The claim is deleted while a pod is attached: the address stays until the attachment ends.
    client.resource(claim).delete();
    await()
        .atMost(RETRIES)
        .until(
            () ->
                Cluster.subClaimOf(client, pool, ip)
                    .map(b -> b.getMetadata().getDeletionTimestamp() != null)
                    .orElse(true));
    Thread.sleep(3000);
    assertThat(Cluster.subClaimOf(client, pool, ip))
        .as("held while the second pod is attached")
        .isPresent();
    assertThat(call(order.get(1), "DEL", second, "c-second", true).ok()).isTrue();
    await().atMost(RETRIES).until(() -> Cluster.subClaimOf(client, pool, ip).isEmpty());
    System.out.printf(
        "claim %s/vm-a.tenant kept %s from node %s to node %s, and gave it back once deleted and"
            + " detached%n",
        namespace, ip, order.get(0).node, order.get(1).node);
  }

  /**
   * The claim was the address's holder: once it is deleted, its address rests for the pool's
   * reuseDelaySeconds (design §4.8, counted from its sub-claim's deletion) before another pod gets
   * it. The pool has one address, so the ordinary pod's ADD can only get that one.
   */
  @Test
  void aDeletedClaimsAddressRestsForThePoolsReuseDelayBeforeAnotherPodGetsIt() throws Exception {
    int reuseDelay = 10;
    IPPoolSpec spec = Cluster.spec("10.212.0.0/28", 28, reuseDelay);
    spec.setRangeStart("10.212.0.5");
    spec.setRangeEnd("10.212.0.5");
    String single = Cluster.readiedPool(client, "sticky-rest", spec);
    List<String> pools = List.of(single);
    List<NodeRig> order = new ArrayList<>(rigs);
    Collections.shuffle(order, random);
    String namespace = randomNamespace();
    IPAMClaim claim = claim(namespace, "vm-r." + network, network, IFNAME, null);

    Pod first = claimPod(order.get(0), namespace, "vm-r-launcher", "vm-r." + network);
    assertThat(dualStack(order.get(0), "ADD", first, "c-r", pools).ips())
        .containsExactly("10.212.0.5");
    assertThat(dualStack(order.get(0), "DEL", first, "c-r", pools).ok()).isTrue();
    client.resource(first).withGracePeriod(0).delete();
    String subClaim = ResourceNames.blockName(single, Cidr.parse("10.212.0.5/32"));

    client.resource(claim).delete();
    IPBlock resting =
        await()
            .atMost(RETRIES)
            .until(
                () -> client.resources(IPBlock.class).withName(subClaim).get(),
                b -> b == null || b.getMetadata().getDeletionTimestamp() != null);
    assertThat(resting).as("the sub-claim rests, Terminating").isNotNull();
    String deleted = resting.getMetadata().getDeletionTimestamp();
    Instant due = Instant.parse(deleted).plusSeconds(reuseDelay);

    CniCall.Outcome ordinary =
        order.get(1).addRetried(pools, 7000, Duration.ofSeconds(reuseDelay).plus(RETRIES));
    Instant got = Instant.now();
    assertThat(ordinary.ok()).as(ordinary.stdout()).isTrue();
    assertThat(ordinary.stdout()).contains("10.212.0.5");
    assertThat(got).as("not before the reuse delay since the claim was found gone").isAfter(due);
    System.out.println(
        "claim "
            + namespace
            + "/vm-r.tenant deleted; its sub-claim was deleted at "
            + deleted
            + " and 10.212.0.5 went to another pod at "
            + got
            + " (reuse delay "
            + reuseDelay
            + " s)");
  }

  @Test
  void aVirtualMachineKeepsItsAddressThroughTwentyStopStartCyclesWithKills() throws Exception {
    String namespace = randomNamespace();
    ConfigMap vm =
        client
            .configMaps()
            .inNamespace(namespace)
            .resource(
                new ConfigMapBuilder().withNewMetadata().withName("vm-b").endMetadata().build())
            .create();
    IPAMClaim claim = claim(namespace, "vm-b." + network, network, IFNAME, vm);
    int daemonKillAt = 2 + random.nextInt(8);
    int operatorKillAt = 11 + random.nextInt(8);
    System.out.println(
        "VM cycles: kipam-node SIGKILLed during re-attach "
            + daemonKillAt
            + ", kipam-operator during re-attach "
            + operatorKillAt);
    String ip = null;
    for (int cycle = 0; cycle < 20; cycle++) {
      NodeRig rig = rigs.get(random.nextInt(rigs.size()));
      String name = "virt-launcher-vm-b-" + cycle;
      Pod launcher = claimPod(rig, namespace, name, "vm-b." + network);
      String container = "c-vm-" + cycle;
      CompletableFuture<CniCall.Outcome> add =
          CompletableFuture.supplyAsync(() -> attach(rig, launcher, container));
      if (cycle == daemonKillAt) {
        Thread.sleep(random.nextInt(300));
        rig.daemon.kill();
        rig.daemon.start();
      } else if (cycle == operatorKillAt) {
        Thread.sleep(random.nextInt(300));
        SYSTEM.killOperator();
      }
      CniCall.Outcome outcome = add.get();
      if (cycle == daemonKillAt) {
        rig.awaitReady();
        outcome = attach(rig, launcher, container);
      }
      String got = outcome.ip();
      if (ip == null) {
        ip = got;
      }
      assertThat(got).as("cycle %d on node %s", cycle, rig.node).isEqualTo(ip);
      assertClaimStatus(claim, ip, name);
      // Stop: the runtime's DEL and the pod's deletion, in either order.
      if (random.nextBoolean()) {
        assertThat(call(rig, "DEL", launcher, container, true).ok()).isTrue();
        client.resource(launcher).withGracePeriod(0).delete();
      } else {
        client.resource(launcher).withGracePeriod(0).delete();
        assertThat(call(rig, "DEL", launcher, container, true).ok()).isTrue();
      }
    }
    // The VM is deleted: its controller lets the claim go, and the address goes back.
    String held = ip;
    client.resource(vm).delete();
    await().atMost(RETRIES).until(() -> addressOf(namespace, held).isEmpty());
    IPAMClaim fresh = client.resource(claim).get();
    fresh.getMetadata().setFinalizers(List.of());
    client.resource(fresh).update();
    await().atMost(RETRIES).until(() -> Cluster.subClaimOf(client, pool, held).isEmpty());
    System.out.println("VM vm-b kept " + ip + " through 20 stop/start cycles on random nodes");
  }

  @Test
  void badInputsAreRefusedNamingTheClaimAndTheReasonAndNothingIsAllocated() throws Exception {
    List<NodeRig> order = new ArrayList<>(rigs);
    Collections.shuffle(order, random);
    NodeRig rig = order.get(0);
    String namespace = namespaces.get(0);
    String other = namespaces.get(1);
    claim(namespace, "ok." + network, network, IFNAME, null);
    claim(namespace, "wrong-net." + network, "storage", IFNAME, null);
    claim(namespace, "wrong-if." + network, network, "net5", null);
    claim(other, "elsewhere." + network, network, IFNAME, null);

    Map<String, String[]> cases = new HashMap<>();
    cases.put("ok." + network + "|nopersist", new String[] {"\"code\":7,", "allowPersistentIPs"});
    cases.put(other + "/elsewhere." + network, new String[] {"\"code\":7,", "another namespace"});
    cases.put("wrong-net." + network, new String[] {"\"code\":7,", "is for network storage"});
    cases.put("wrong-if." + network, new String[] {"\"code\":7,", "is for interface net5"});
    cases.put("missing." + network, new String[] {"\"code\":11,", "does not exist"});
    int k = 0;
    for (var entry : cases.entrySet()) {
      boolean persist = !entry.getKey().endsWith("|nopersist");
      String reference = entry.getKey().replace("|nopersist", "");
      Pod pod = claimPod(rig, namespace, "bad-" + k, reference);
      CniCall.Outcome outcome = call(rig, "ADD", pod, "c-bad-" + k, persist);
      assertThat(outcome.ok()).as(outcome.stdout()).isFalse();
      assertThat(outcome.stdout())
          .contains(entry.getValue()[0])
          .contains(reference.contains("/") ? reference : namespace + "/" + reference)
          .contains(entry.getValue()[1]);
      assertThat(Cluster.addressesOf(client, namespace, pod.getMetadata().getName())).isEmpty();
      k++;
    }

    Pod malformed =
        client
            .pods()
            .inNamespace(namespace)
            .resource(
                Cluster.podOn("bad-json", rig.node)
                    .editMetadata()
                    .addToAnnotations("k8s.v1.cni.cncf.io/networks", "[{\"name\":")
                    .endMetadata()
                    .build())
            .create();
    CniCall.Outcome refused = call(rig, "ADD", malformed, "c-bad-json", true);
    assertThat(refused.stdout())
        .contains("\"code\":7,")
        .contains("k8s.v1.cni.cncf.io/networks")
        .contains("not a JSON list");
    assertThat(Cluster.addressesOf(client, namespace, "bad-json")).isEmpty();

    // Attached to a running pod on one node, the claim's address is refused to a second pod.
    Pod running = claimPod(rig, namespace, "ok-1", "ok." + network);
    String ip = attach(rig, running, "c-ok-1").ip();
    NodeRig second = order.get(1);
    Pod migrating = claimPod(second, namespace, "ok-2", "ok." + network);
    CniCall.Outcome inUse = call(second, "ADD", migrating, "c-ok-2", true);
    assertThat(inUse.stdout())
        .contains("\"code\":103,")
        .contains("IPAMClaim " + namespace + "/ok." + network)
        .contains("attached to pod " + namespace + "/ok-1")
        .contains("live migration is not supported");
    assertThat(Cluster.addressesOf(client, namespace, "ok-2")).isEmpty();
    // Once the first pod is being deleted, the second is asked to try again; once its
    // attachment is over, the second gets the address.
    client.resource(running).withGracePeriod(0).delete();
    assertThat(call(rig, "DEL", running, "c-ok-1", true).ok()).isTrue();
    assertThat(attach(second, migrating, "c-ok-2").ip()).isEqualTo(ip);
  }

  // ---- the pods, the claims and the calls ----

  private IPAMClaim claim(
      String namespace, String name, String network, String ifName, ConfigMap owner) {
    IPAMClaim claim = new IPAMClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setNamespace(namespace);
    if (owner != null) {
      // As KubeVirt's ipam-extensions makes it: owned by the VM, with the controller's finalizer.
      claim
          .getMetadata()
          .setOwnerReferences(
              List.of(Cluster.controllerReference("ConfigMap", owner.getMetadata(), true)));
      claim.getMetadata().setFinalizers(List.of("kubevirt.io/persistent-ipam"));
    }
    claim.setSpec(new IPAMClaimSpec(network, ifName));
    return client.resource(claim).create();
  }

  private String randomNamespace() {
    return namespaces.get(random.nextInt(namespaces.size()));
  }

  private List<NodeRig> shuffledRigs() {
    List<NodeRig> order = new ArrayList<>(rigs);
    Collections.shuffle(order, random);
    return order;
  }

  private Pod claimPod(NodeRig rig, String namespace, String name, String claimReference) {
    String selection =
        "[{\"name\":\""
            + network
            + "\",\"interface\":\""
            + IFNAME
            + "\",\"ipam-claim-reference\":\""
            + claimReference
            + "\"}]";
    return Cluster.annotatedPod(
        client, namespace, name, rig.node, Map.of("k8s.v1.cni.cncf.io/networks", selection));
  }

  private String config(boolean allowPersistentIPs, NodeRig rig, List<String> pools) {
    return "{\"cniVersion\":\"1.1.0\",\"name\":\""
        + network
        + "\",\"type\":\"bridge\",\"allowPersistentIPs\":"
        + allowPersistentIPs
        + ",\"ipam\":{\"type\":\"kipam\",\"pools\":[\""
        + String.join("\",\"", pools)
        + "\"],\"socket\":\""
        + rig.daemon.socket
        + "\"}}";
  }

  private CniCall.Outcome call(
      NodeRig rig, String command, Pod pod, String container, boolean allowPersistentIPs) {
    return call(rig, command, pod, container, allowPersistentIPs, List.of(pool));
  }

  private CniCall.Outcome call(
      NodeRig rig,
      String command,
      Pod pod,
      String container,
      boolean allowPersistentIPs,
      List<String> pools) {
    return CniCall.run(
        rig.kipam,
        CniCall.env(command, container, IFNAME, pod),
        config(allowPersistentIPs, rig, pools));
  }

  /**
   * Every slot of the pool is one node's, Exclusive, with an address free: that node makes one of
   * its slots Shared for the claim (kipam-operator would not: the node is not short of addresses of
   * its own), and the claim's address then follows its pod to another node.
   */
  @Test
  void whenOneNodeHoldsEverySlotItMakesOneSharedForTheClaim() throws Exception {
    String small =
        Cluster.readiedPool(client, "sticky-small", Cluster.spec("10.211.0.0/28", 30, 0));
    List<NodeRig> order = new ArrayList<>(rigs);
    Collections.shuffle(order, random);
    NodeRig holder = order.get(0);
    int ordinary = 0;
    while (holder.blocks(small).size() < 4) {
      assertThat(holder.addRetried(List.of(small), 5000 + ordinary, RETRIES).ok()).isTrue();
      ordinary++;
    }
    System.out.println(
        "node " + holder.node + " holds every slot of " + small + " after " + ordinary + " pods");
    String namespace = randomNamespace();
    claim(namespace, "vm-s." + network, network, IFNAME, null);
    List<String> pools = List.of(small);

    Pod first = claimPod(holder, namespace, "vm-s-launcher-1", "vm-s." + network);
    List<String> ip = dualStack(holder, "ADD", first, "c-s1", pools).ips();
    IPBlock subClaim =
        client
            .resources(IPBlock.class)
            .withName(ResourceNames.blockName(small, Cidr.of(IpAddress.parse(ip.get(0)), 32)))
            .get();
    assertThat(subClaim.getSpec().getClaim()).isNotNull();
    assertThat(client.resources(IPBlock.class).withName(subClaim.getSpec().getParent()).get())
        .as("the holder's slot, Shared now")
        .satisfies(b -> assertThat(b.getStatus().getMode()).hasToString("Shared"));
    assertThat(dualStack(holder, "DEL", first, "c-s1", pools).ok()).isTrue();
    client.resource(first).withGracePeriod(0).delete();

    Pod second = claimPod(order.get(1), namespace, "vm-s-launcher-2", "vm-s." + network);
    assertThat(dualStack(order.get(1), "ADD", second, "c-s2", pools).ips()).isEqualTo(ip);
  }

  /** A virtual machine with a fixed address: the claim takes the chosen one and keeps it. */
  @Test
  void aClaimTakesTheChosenAddressAndKeepsIt() throws Exception {
    String namespace = randomNamespace();
    List<NodeRig> order = shuffledRigs();
    IPAMClaim claim = claim(namespace, "vm-f." + network, network, IFNAME, null);
    String fixed = unclaimedSlotAddress();

    Pod first = claimPod(order.get(0), namespace, "vm-f-launcher-1", "vm-f." + network);
    assertThat(withIp(order.get(0), first, "c-f1", fixed).ips()).containsExactly(fixed);
    assertClaimStatus(claim, fixed, "vm-f-launcher-1");
    assertThat(call(order.get(0), "DEL", first, "c-f1", true).ok()).isTrue();
    client.resource(first).withGracePeriod(0).delete();

    Pod second = claimPod(order.get(1), namespace, "vm-f-launcher-2", "vm-f." + network);
    assertThat(attach(order.get(1), second, "c-f2").ip()).isEqualTo(fixed);
    assertThat(call(order.get(1), "DEL", second, "c-f2", true).ok()).isTrue();
    client.resource(second).withGracePeriod(0).delete();

    Pod third = claimPod(order.get(2), namespace, "vm-f-launcher-3", "vm-f." + network);
    String other =
        fixed.replaceAll("\\d+$", "") + (Integer.parseInt(fixed.replaceAll(".*\\.", "")) + 1);
    CniCall.Outcome refused = withIp(order.get(2), third, "c-f3", other);
    assertThat(refused.stdout())
        .contains("\"code\":7,")
        .contains("IPAMClaim " + namespace + "/vm-f." + network + " holds address " + fixed);
    System.out.println("claim vm-f took the chosen " + fixed + " and kept it on another node");
  }

  /** ADD with {@code IP=ip} in CNI_ARGS, retried while "try again" or held for a moment. */
  private CniCall.Outcome withIp(NodeRig rig, Pod pod, String container, String ip) {
    long deadline = System.nanoTime() + RETRIES.toNanos();
    CniCall.Outcome outcome;
    do {
      outcome =
          CniCall.whileTryAgain(
              () -> {
                var env = new java.util.HashMap<>(CniCall.env("ADD", container, IFNAME, pod));
                env.put("CNI_ARGS", env.get("CNI_ARGS") + ";IP=" + ip);
                return CniCall.run(rig.kipam, env, config(true, rig, List.of(pool)));
              },
              RETRIES);
    } while (outcome.stdout().contains("\"code\":104,") && System.nanoTime() < deadline);
    return outcome;
  }

  /** An address of a /28 slot of the pool no block covers now. */
  private String unclaimedSlotAddress() {
    List<IPBlock> blocks =
        client.resources(IPBlock.class).withLabel(ApiConstants.LABEL_POOL, pool).list().getItems();
    for (int i = 15; i >= 0; i--) {
      IpAddress network = IpAddress.parse("10.209.0." + (i * 16));
      boolean taken =
          blocks.stream().anyMatch(b -> Cidr.parse(b.getSpec().getCidr()).contains(network));
      if (!taken) {
        return "10.209.0." + (i * 16 + 5);
      }
    }
    throw new IllegalStateException("every slot of " + pool + " is claimed");
  }

  @Test
  void aDualStackClaimKeepsBothItsAddressesOnAnotherNode() throws Exception {
    String v6 = Cluster.readiedPool(client, "sticky6", Cluster.spec("fd00:209::/120", 124, 0));
    String namespace = randomNamespace();
    List<NodeRig> order = shuffledRigs();
    IPAMClaim claim = claim(namespace, "vm-d." + network, network, IFNAME, null);
    List<String> pools = List.of(pool, v6);

    Pod first = claimPod(order.get(0), namespace, "vm-d-launcher-1", "vm-d." + network);
    List<String> ips = dualStack(order.get(0), "ADD", first, "c-d1", pools).ips();
    assertThat(ips).hasSize(2);
    assertThat(client.resource(claim).get().getStatus().getIps())
        .containsExactly(ips.get(0) + "/24", ips.get(1) + "/120");
    assertThat(dualStack(order.get(0), "DEL", first, "c-d1", pools).ok()).isTrue();
    client.resource(first).withGracePeriod(0).delete();

    Pod second = claimPod(order.get(1), namespace, "vm-d-launcher-2", "vm-d." + network);
    assertThat(dualStack(order.get(1), "ADD", second, "c-d2", pools).ips()).isEqualTo(ips);
    System.out.println("dual-stack claim vm-d kept " + ips + " on another node");
  }

  /**
   * Two pods of one new claim start on two nodes at the same moment, round after round over three
   * namespaces: the claim ends with one address, named by its status and held by one sub-claim; one
   * pod gets it, the other is told the claim's address is in use (code 103), never another one.
   */
  @Test
  void twoNodesAttachingANewClaimAtOnceAgreeOnOneAddress() throws Exception {
    var threads = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 8; round++) {
        String namespace = namespaces.get(round % namespaces.size());
        List<NodeRig> order = new ArrayList<>(rigs);
        Collections.shuffle(order, random);
        String name = "vm-r" + round + "." + network;
        IPAMClaim claim = claim(namespace, name, network, IFNAME, null);
        List<Pod> pods =
            List.of(
                claimPod(order.get(0), namespace, "vm-r" + round + "-a", name),
                claimPod(order.get(1), namespace, "vm-r" + round + "-b", name));
        var start = new java.util.concurrent.CyclicBarrier(2);
        List<CompletableFuture<CniCall.Outcome>> adds = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
          NodeRig rig = order.get(n);
          Pod pod = pods.get(n);
          adds.add(
              CompletableFuture.supplyAsync(
                  () -> {
                    try {
                      start.await();
                    } catch (Exception e) {
                      throw new IllegalStateException(e);
                    }
                    return attach(rig, pod, "c-" + pod.getMetadata().getName());
                  },
                  threads));
        }
        List<CniCall.Outcome> outcomes = new ArrayList<>();
        for (var add : adds) {
          outcomes.add(add.get());
        }
        List<String> ips =
            outcomes.stream().filter(CniCall.Outcome::ok).map(CniCall.Outcome::ip).toList();
        System.out.printf(
            "round %d: %s/%s on %s and %s: %s%n",
            round, namespace, name, order.get(0).node, order.get(1).node, outcomes);
        assertThat(ips).as("round %d: one pod attached", round).hasSize(1);
        assertThat(outcomes.stream().filter(o -> !o.ok()))
            .as("round %d: the other is told the claim's address is in use", round)
            .allSatisfy(o -> assertThat(o.stdout()).contains("\"code\":103"));
        String ip = ips.get(0);
        assertThat(client.resource(claim).get().getStatus().getIps())
            .as("round %d: the claim's status", round)
            .containsExactly(ip + "/24");
        assertThat(
                client
                    .resources(IPBlock.class)
                    .withLabel(ApiConstants.LABEL_POOL, pool)
                    .withLabel(ApiConstants.LABEL_CLAIM, claim.getMetadata().getUid())
                    .list()
                    .getItems())
            .as("round %d: the claim's sub-claims", round)
            .extracting(b -> b.getSpec().getCidr())
            .containsExactly(ip + "/32");
        for (int n = 0; n < 2; n++) {
          if (outcomes.get(n).ok()) {
            Pod pod = pods.get(n);
            assertThat(
                    call(order.get(n), "DEL", pod, "c-" + pod.getMetadata().getName(), true).ok())
                .isTrue();
          }
        }
        for (Pod pod : pods) {
          client.resource(pod).withGracePeriod(0).delete();
        }
        client.resource(claim).delete();
      }
    } finally {
      threads.shutdownNow();
    }
  }

  private CniCall.Outcome dualStack(
      NodeRig rig, String command, Pod pod, String container, List<String> pools) {
    return CniCall.whileTryAgain(() -> call(rig, command, pod, container, true, pools), RETRIES);
  }

  /** ADD as a runtime retries it: again while the answer is "try again" (code 11). */
  private CniCall.Outcome attach(NodeRig rig, Pod pod, String container) {
    return CniCall.whileTryAgain(() -> call(rig, "ADD", pod, container, true), RETRIES);
  }

  private void assertClaimStatus(IPAMClaim claim, String ip, String ownerPod) {
    IPAMClaim fresh = client.resource(claim).get();
    assertThat(fresh.getStatus().getIps()).containsExactly(ip + "/24");
    assertThat(fresh.getStatus().getOwnerPod().getName()).isEqualTo(ownerPod);
  }

  private Optional<IPAddress> addressOf(String namespace, String ip) {
    return Optional.ofNullable(
        client
            .resources(IPAddress.class)
            .inNamespace(namespace)
            .withName(ResourceNames.addressName(pool, IpAddress.parse(ip)))
            .get());
  }
}
