package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.testing.RealNode;
import io.kipam.testing.Variants;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * kipam under Multus on a real node (kubelet, containerd, runc): Multus's thin plugin is the node's
 * CNI, the cluster network ({@code eth0}) is {@code bridge} with kipam, and two
 * NetworkAttachmentDefinitions in each test namespace give {@code net1} and {@code net2} from two
 * pools of two networks whose CIDRs overlap. What a pod's network-selection elements ask for (a
 * chosen address, an IPAMClaim) reaches kipam through Multus, as in a cluster. Arrival order
 * (namespaces, pods) is drawn from the run's seed, printed. Fails, never skips, when the node
 * cannot start. The pools' CIDRs are data: nothing is sent outside the node's network namespace.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultusOnRealNodeE2E {

  static final String CLUSTER_NETWORK = "multus-default";
  static final String PRIMARY_POOL = "multus-pods";
  static final String OTHER_PRIMARY_POOL = "multus-pods-gold";
  static final String TENANT_A = "tenant-a";
  static final String TENANT_B = "tenant-b";

  /** The one CIDR both tenant networks' pools cover: their addresses may coincide. */
  static final String TENANT_CIDR = "10.70.0.0/26";

  static final List<String> NAMESPACES = List.of("multus-a", "multus-b", "multus-c");
  static final String NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks";
  static final String STATUS_ANNOTATION = "k8s.v1.cni.cncf.io/network-status";
  private static final Duration PODS_TIMEOUT = Duration.ofMinutes(4);

  private static final Random random = new Random(Variants.SEED);
  private static final Set<String> usedOnTenants = new HashSet<>();
  private static long begin;
  private static RealNode node;
  private static KipamOnRealNode kipam;
  private static KubernetesClient client;

  @BeforeAll
  static void installMultusAndKipam() {
    begin = System.nanoTime();
    System.out.printf(
        "arrival order drawn from seed %d (-Dkipam.seed=%d repeats it)%n",
        Variants.SEED, Variants.SEED);
    node = RealNode.start();
    client = node.client();
    node.installMultus(CLUSTER_NETWORK);
    Path ipamClaims =
        Path.of(System.getProperty("kipam.configDir", "../config"))
            .resolve("ipamclaims")
            .toAbsolutePath();
    node.controlPlane().kubectl("apply", "--server-side", "-k", ipamClaims.toString());
    // The bridge is no gateway: the pool annotation puts some pods in a second pool on it.
    kipam =
        KipamOnRealNode.install(
            node, KipamOnRealNode.bridgeWithoutGateway(CLUSTER_NETWORK, PRIMARY_POOL));
    kipam.awaitReady();
    client.resource(pool(PRIMARY_POOL, "10.252.0.0/26", null)).create();
    client.resource(pool(OTHER_PRIMARY_POOL, "10.252.1.0/26", null)).create();
    client.resource(pool("tenant-a-v4", TENANT_CIDR, TENANT_A)).create();
    client.resource(pool("tenant-b-v4", TENANT_CIDR, TENANT_B)).create();
    for (String ns : NAMESPACES) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      client.resource(attachmentDefinition(ns, TENANT_A, "kipam-br1", "tenant-a-v4")).create();
      client.resource(attachmentDefinition(ns, TENANT_B, "kipam-br2", "tenant-b-v4")).create();
    }
    System.out.printf(
        "Multus, kipam and the networks in place %.1f s after the node began%n", seconds(begin));
  }

  @AfterAll
  static void stopNode() {
    KipamOnRealNode.closeAfterWorkloads(node, kipam, NAMESPACES);
    System.out.printf("Multus real-node tier: %.1f s in all%n", seconds(begin));
  }

  static IPPool pool(String name, String cidr, String network) {
    IPPool pool = new IPPool();
    pool.setSpec(new IPPoolSpec());
    pool.getMetadata().setName(name);
    pool.getSpec().setCidr(cidr);
    pool.getSpec().setBlockSize(28);
    pool.getSpec().setNetwork(network);
    return pool;
  }

  /**
   * A NetworkAttachmentDefinition of network {@code network}: a {@code bridge} of its own with
   * kipam as IPAM, the {@code ips} capability declared (so an element's {@code "ips"} reaches
   * kipam) and persistent addresses allowed (so an element's {@code ipam-claim-reference} does).
   */
  static GenericKubernetesResource attachmentDefinition(
      String namespace, String network, String bridge, String pool) {
    String config =
        """
        {
          "cniVersion": "1.0.0",
          "name": "%s",
          "plugins": [
            {
              "type": "bridge",
              "bridge": "%s",
              "capabilities": {"ips": true},
              "allowPersistentIPs": true,
              "ipam": {"type": "kipam", "pools": ["%s"]}
            }
          ]
        }
        """
            .formatted(network, bridge, pool);
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("k8s.cni.cncf.io/v1")
        .withKind("NetworkAttachmentDefinition")
        .withNewMetadata()
        .withName(network)
        .withNamespace(namespace)
        .endMetadata()
        .addToAdditionalProperties("spec", Map.of("config", config))
        .build();
  }

  @Test
  @Order(1)
  void podsNamingTwoAttachmentsGetThreeInterfacesEachFromItsPoolAndGiveThemBack() {
    List<Pod> pods = new ArrayList<>();
    for (String ns : NAMESPACES) {
      for (int i = 0; i < 3; i++) {
        pods.add(pod(ns, "two-nets-" + i, Map.of(NETWORKS_ANNOTATION, TENANT_A + "," + TENANT_B)));
      }
    }
    Collections.shuffle(pods, random);
    System.out.printf(
        "creating in this order: %s%n",
        pods.stream().map(MultusOnRealNodeE2E::name).collect(Collectors.joining(", ")));
    long created = System.nanoTime();
    pods.forEach(p -> client.resource(p).create());
    List<Pod> running = pods.stream().map(p -> awaitRunning(p, null)).toList();
    System.out.printf(
        "%d pods with eth0, net1, net2 Running %.1f s after they were created%n",
        running.size(), seconds(created));

    Map<String, List<IPAddress>> byOwner = addressesByOwner();
    Map<String, List<String>> byNetwork = new TreeMap<>();
    for (Pod pod : running) {
      List<IPAddress> addresses = byOwner.get(pod.getMetadata().getUid());
      assertThat(addresses).as("IPAddresses of %s", name(pod)).hasSize(3);
      Map<String, IPAddress> byInterface =
          addresses.stream().collect(Collectors.toMap(a -> a.getSpec().getInterfaceName(), a -> a));
      assertThat(byInterface).containsOnlyKeys("eth0", "net1", "net2");
      assertAddress(byInterface.get("eth0"), pod, CLUSTER_NETWORK, PRIMARY_POOL);
      assertAddress(byInterface.get("net1"), pod, TENANT_A, "tenant-a-v4");
      assertAddress(byInterface.get("net2"), pod, TENANT_B, "tenant-b-v4");
      assertThat(pod.getStatus().getPodIP()).isEqualTo(byInterface.get("eth0").getSpec().getIp());

      Map<String, String> reported = networkStatus(pod);
      String inPod = node.addressesInPod(pod);
      for (var entry : byInterface.entrySet()) {
        String ip = entry.getValue().getSpec().getIp();
        assertThat(reported)
            .as("network-status of %s", name(pod))
            .containsEntry(entry.getKey(), ip);
        assertThat(inPod)
            .as("addresses inside %s", name(pod))
            .containsPattern(entry.getKey() + "\\s+inet " + ip.replace(".", "\\.") + "/");
        byNetwork
            .computeIfAbsent(entry.getValue().getSpec().getNetwork(), n -> new ArrayList<>())
            .add(ip);
      }
    }
    byNetwork.forEach(
        (network, ips) -> {
          assertThat(ips).as("addresses of network %s", network).doesNotHaveDuplicates();
          System.out.printf("network %s: %s%n", network, ips.stream().sorted().toList());
        });
    usedOnTenants.addAll(byNetwork.get(TENANT_A));
    usedOnTenants.addAll(byNetwork.get(TENANT_B));
    List<String> inBoth = new ArrayList<>(byNetwork.get(TENANT_A));
    inBoth.retainAll(byNetwork.get(TENANT_B));
    System.out.printf(
        "addresses held in both %s and %s (overlapping pools, each once per network): %d%n",
        TENANT_A, TENANT_B, inBoth.size());
    System.out.print(
        node.controlPlane().kubectl("get", "ipaddresses.kipam.io", "-A", "-o", "wide"));

    long deleted = System.nanoTime();
    running.forEach(p -> client.resource(p).delete());
    awaitNoAddresses();
    System.out.printf(
        "every pod deleted: its three addresses gone %.1f s later%n", seconds(deleted));
  }

  @Test
  @Order(2)
  void elementsIpsChooseOneAddressOnTwoNetworksAndThePoolsAnnotationMovesOnlyEth0() {
    String ns = NAMESPACES.get(random.nextInt(NAMESPACES.size()));
    // An address no earlier test used on either network: a freed one rests for the pool's reuse
    // delay (30 s). The same address on both: their pools overlap, each network holds it once.
    List<String> unused = new ArrayList<>();
    for (int last = 1; last < 63; last++) {
      if (!usedOnTenants.contains("10.70.0." + last)) {
        unused.add("10.70.0." + last);
      }
    }
    String chosen = unused.get(random.nextInt(unused.size()));
    Pod pod =
        pod(
            ns,
            "chosen",
            Map.of(
                NETWORKS_ANNOTATION,
                "[{\"name\": \"%s\", \"ips\": [\"%s/26\"]}, {\"name\": \"%s\", \"ips\": [\"%s/26\"]}]"
                    .formatted(TENANT_A, chosen, TENANT_B, chosen),
                ApiConstants.ANNOTATION_POOLS,
                OTHER_PRIMARY_POOL));
    client.resource(pod).create();
    Pod running = awaitRunning(pod, null);
    Map<String, IPAddress> byInterface = interfacesOf(running);
    assertThat(byInterface).containsOnlyKeys("eth0", "net1", "net2");
    assertAddress(byInterface.get("net1"), running, TENANT_A, "tenant-a-v4");
    assertAddress(byInterface.get("net2"), running, TENANT_B, "tenant-b-v4");
    assertThat(byInterface.get("net1").getSpec().getIp()).isEqualTo(chosen);
    assertThat(byInterface.get("net2").getSpec().getIp()).isEqualTo(chosen);
    assertAddress(byInterface.get("eth0"), running, CLUSTER_NETWORK, OTHER_PRIMARY_POOL);
    assertThat(networkStatus(running)).containsEntry("net1", chosen).containsEntry("net2", chosen);
    assertThat(node.addressesInPod(running))
        .containsPattern("net1\\s+inet " + chosen.replace(".", "\\.") + "/26")
        .containsPattern("net2\\s+inet " + chosen.replace(".", "\\.") + "/26");
    System.out.printf(
        "%s: net1 and net2 both %s (one address of two overlapping pools, once per network) as"
            + " its elements' \"ips\" chose, eth0 %s from %s as kipam.io/pools chose%n",
        name(running), chosen, byInterface.get("eth0").getSpec().getIp(), OTHER_PRIMARY_POOL);
    client.resource(running).delete();
    awaitNoAddresses();
  }

  @Test
  @Order(3)
  void aVmLikePodMadeAgainKeepsNet1sAddressThroughItsIpamClaim() {
    String ns = NAMESPACES.get(random.nextInt(NAMESPACES.size()));
    IPAMClaim claim = new IPAMClaim();
    claim.getMetadata().setName("vm-a." + TENANT_A);
    claim.getMetadata().setNamespace(ns);
    claim.setSpec(new IPAMClaimSpec(TENANT_A, "net1"));
    client.resource(claim).create();
    String element =
        "[{\"name\": \"%s\", \"interface\": \"net1\", \"ipam-claim-reference\": \"vm-a.%s\"}]"
            .formatted(TENANT_A, TENANT_A);
    Pod launcher = pod(ns, "vm-a-launcher", Map.of(NETWORKS_ANNOTATION, element));
    client.resource(launcher).create();
    Pod first = awaitRunning(launcher, null);
    String ip = interfacesOf(first).get("net1").getSpec().getIp();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> assertThat(claimNamed(ns).getStatus().getIps()).containsExactly(ip + "/26"));

    int restarts = 1 + random.nextInt(2);
    for (int i = 0; i < restarts; i++) {
      String uid = first.getMetadata().getUid();
      long deleted = System.nanoTime();
      client.resource(first).delete();
      await()
          .atMost(Duration.ofMinutes(2))
          .until(() -> client.pods().inNamespace(ns).withName("vm-a-launcher").get() == null);
      double gone = seconds(deleted);
      client.resource(launcher).create();
      first = awaitRunning(launcher, uid);
      List<String> retried = sandboxFailures(first);
      System.out.printf("sandbox creations kubelet retried for %s: %s%n", name(first), retried);
      // The claim's own address never rests for the pool's reuse delay: its holder is the claim.
      assertThat(retried).noneMatch(m -> m.contains("reuse delay"));
      Map<String, IPAddress> again = interfacesOf(first);
      assertThat(again.get("net1").getSpec().getIp()).isEqualTo(ip);
      assertThat(again.get("net1").getSpec().getClaim()).isEqualTo("vm-a." + TENANT_A);
      assertThat(networkStatus(first)).containsEntry("net1", ip);
      System.out.printf(
          "%s made again (%d of %d): net1 keeps %s through its IPAMClaim (old pod gone %.1f s,"
              + " new one Running %.1f s after the delete)%n",
          name(first), i + 1, restarts, ip, gone, seconds(deleted));
    }

    client.resource(first).delete();
    client.resource(claimNamed(ns)).delete();
    awaitNoAddresses();
  }

  /** The messages of kubelet's FailedCreatePodSandBox events for {@code pod} (its UID). */
  private static List<String> sandboxFailures(Pod pod) {
    return client
        .v1()
        .events()
        .inNamespace(pod.getMetadata().getNamespace())
        .list()
        .getItems()
        .stream()
        .filter(e -> "FailedCreatePodSandBox".equals(e.getReason()))
        .filter(e -> pod.getMetadata().getUid().equals(e.getInvolvedObject().getUid()))
        .map(e -> e.getMessage())
        .toList();
  }

  private static IPAMClaim claimNamed(String ns) {
    return client.resources(IPAMClaim.class).inNamespace(ns).withName("vm-a." + TENANT_A).get();
  }

  private static void assertAddress(IPAddress address, Pod pod, String network, String pool) {
    assertThat(address).as("an IPAddress of %s on %s", name(pod), network).isNotNull();
    assertThat(address.getMetadata().getNamespace()).isEqualTo(pod.getMetadata().getNamespace());
    assertThat(address.getSpec().getNetwork()).isEqualTo(network);
    assertThat(address.getSpec().getPool()).isEqualTo(pool);
  }

  /** Interface to address, as Multus reported them in the pod's network-status annotation. */
  static Map<String, String> networkStatus(Pod pod) {
    String status = pod.getMetadata().getAnnotations().get(STATUS_ANNOTATION);
    assertThat(status).as("%s of %s", STATUS_ANNOTATION, name(pod)).isNotNull();
    List<Map<String, Object>> entries =
        Serialization.unmarshal(
            new ByteArrayInputStream(status.getBytes(StandardCharsets.UTF_8)),
            new TypeReference<List<Map<String, Object>>>() {});
    Map<String, String> byInterface = new TreeMap<>();
    for (Map<String, Object> entry : entries) {
      @SuppressWarnings("unchecked")
      List<String> ips = (List<String>) entry.get("ips");
      assertThat(ips).as("ips of %s in %s", entry.get("interface"), name(pod)).hasSize(1);
      byInterface.put((String) entry.get("interface"), ips.get(0));
    }
    return byInterface;
  }

  /** The pod's IPAddresses by interface. */
  static Map<String, IPAddress> interfacesOf(Pod pod) {
    return addressesByOwner().getOrDefault(pod.getMetadata().getUid(), List.of()).stream()
        .collect(Collectors.toMap(a -> a.getSpec().getInterfaceName(), a -> a));
  }

  /** Every IPAddress held by a pod, by the pod's UID (a claim's address through its pod). */
  static Map<String, List<IPAddress>> addressesByOwner() {
    Map<String, List<IPAddress>> byOwner = new TreeMap<>();
    for (IPAddress address : client.resources(IPAddress.class).inAnyNamespace().list().getItems()) {
      String uid =
          address.getSpec().getPod() != null && address.getSpec().getPod().getUid() != null
              ? address.getSpec().getPod().getUid()
              : address.getMetadata().getOwnerReferences().stream()
                  .filter(o -> "Pod".equals(o.getKind()))
                  .map(OwnerReference::getUid)
                  .findFirst()
                  .orElse("");
      byOwner.computeIfAbsent(uid, u -> new ArrayList<>()).add(address);
    }
    return byOwner;
  }

  private static void awaitNoAddresses() {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                assertThat(client.resources(IPAddress.class).inAnyNamespace().list().getItems())
                    .isEmpty());
  }

  static Pod pod(String namespace, String name, Map<String, String> annotations) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .addToAnnotations(annotations)
        .endMetadata()
        .withSpec(KipamOnRealNode.workloadPodSpec())
        .build();
  }

  /** {@code pod} once Running with its network status written, a pod other than {@code notUid}. */
  private static Pod awaitRunning(Pod pod, String notUid) {
    return KipamOnRealNode.awaitRunningPod(
        client,
        pod.getMetadata().getNamespace(),
        pod.getMetadata().getName(),
        notUid,
        p -> p.getMetadata().getAnnotations().containsKey(STATUS_ANNOTATION),
        PODS_TIMEOUT);
  }

  static String name(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }
}
