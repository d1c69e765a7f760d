package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every way to an address passes one gate (design §5c), shown on a real control plane with three
 * kipam-node processes and kipam-operator, pods over three namespaces: pool annotations choose only
 * among pools of the interface's network (a red pool never reaches a blue interface, a namespace's
 * annotation leaves Multus interfaces alone); a chosen address rests for the pool's reuse delay
 * (the default, 30 s) whoever asks; a chosen address held in another node's Exclusive slot is
 * refused without turning the slot Shared; and an IPv6 /64 whose range holds 48 addresses serves at
 * once. Seeded ({@code -Dkipam.seed=N}): which node and which namespace serve each case.
 */
class OneGateIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  /** Only for the set-up's first ADDs: a pool made Ready a moment ago may not be watched yet. */
  private static final Duration SETUP_RETRIES = Duration.ofSeconds(30);

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("gate");
  private List<NodeRig> rigs;
  private final SeededRandom random = new SeededRandom();
  private List<String> namespaces;
  private int pods;

  @BeforeEach
  void start() throws Exception {
    random.print("OneGateIT");
    String any = Cluster.readiedPool(client, "gate-status", Cluster.spec("10.219.0.0/24", 28, 0));
    namespaces = new ArrayList<>(processes.namespaces);
    Collections.shuffle(namespaces, random);
    rigs = processes.nodes(any, 3, Map.of());
  }

  /**
   * Measured before: a pod's "red" interface got an address of the "blue" pool; a namespace-level
   * annotation moved every secondary interface of the namespace; a blue interface annotated with
   * the red pool and a chosen address Y got Y from the red pool while a pod of another namespace
   * held Y in blue.
   */
  @Test
  void poolAnnotationsChooseOnlyAmongPoolsOfTheInterfacesNetwork() throws Exception {
    String primary = Fixtures.uniqueName("prim");
    String prim = pool("prim", "10.215.0.0/24", primary);
    String primAlt = pool("prim-alt", "10.215.1.0/24", primary);
    String blue = pool("blue", "10.216.0.0/24", Fixtures.uniqueName("blue"));
    String red = pool("red", "10.216.0.0/24", Fixtures.uniqueName("red"));
    String byNamespace = namespaces.get(0);
    String byPod = namespaces.get(1);
    String plain = namespaces.get(2);
    annotate(byNamespace, Map.of(ApiConstants.ANNOTATION_POOLS, primAlt));

    for (String namespace : namespaces) {
      NodeRig rig = rig();
      Map<String, String> annotations =
          namespace.equals(byPod)
              ? Map.of(ApiConstants.ANNOTATION_IPV4_POOLS, red + "," + primAlt)
              : Map.of();
      Pod pod = pod(rig, namespace, annotations);
      CniCall.Outcome eth0 = setup(rig, pod, "eth0", "primary", List.of(prim), null);
      CniCall.Outcome net1 = setup(rig, pod, "net1", "blue-net", List.of(blue), null);
      System.out.println(
          namespace + " on " + rig.node + ": eth0 " + eth0.ip() + ", net1 " + net1.ip());
      String expectedEth0 = namespace.equals(plain) ? "10.215.0.0/24" : "10.215.1.0/24";
      assertThat(in(eth0.ip(), expectedEth0)).as("eth0 of " + namespace).isTrue();
      assertThat(poolOf(pod, net1.ip())).as("net1 of " + namespace + " is blue's").isEqualTo(blue);
    }

    // Y held in blue by a pod of one namespace; a blue interface of another namespace's pod,
    // annotated with the red pool, asks for Y by name: held, and nothing is written in red.
    NodeRig holderRig = rig();
    Pod holder = pod(holderRig, plain, Map.of());
    String y = setup(holderRig, holder, "net1", "blue-net", List.of(blue), null).ip();
    NodeRig askerRig = rig();
    Pod asker = pod(askerRig, byPod, Map.of(ApiConstants.ANNOTATION_POOLS, red));
    CniCall.Outcome asked = call(askerRig, "ADD", asker, "net1", "blue-net", List.of(blue), y);
    System.out.println("IP=" + y + " on a blue interface annotated with red: " + asked.stdout());
    assertThat(asked.ok()).isFalse();
    assertThat(asked.stdout()).contains("\"code\":104,").contains("is held by pod " + plain);
    assertThat(Cluster.addresses(client, red)).as("nothing of red").isEmpty();

    // A configuration naming pools of two networks is refused, naming them.
    CniCall.Outcome mixed = call(rig(), "ADD", holder, "net2", "mixed", List.of(blue, red), null);
    assertThat(mixed.stdout())
        .contains("\"code\":7,")
        .contains("names pools of different networks");
  }

  /**
   * Measured before: another namespace took an address by {@code IP=} 0.1 s after its release on
   * the same node, while a dynamic ADD beside it was told to wait. The pool has the default reuse
   * delay.
   */
  @Test
  void aChosenAddressRestsForTheDefaultReuseDelayWhoeverAsks() throws Exception {
    IPPoolSpec spec = Cluster.spec("10.217.0.0/27", 29, 0);
    spec.setReuseDelaySeconds(null); // the product's default, 30 s
    String pool = Cluster.readiedPool(client, "rest", spec);
    NodeRig rig = rig();
    Pod first = pod(rig, namespaces.get(0), Map.of());
    String x = setup(rig, first, "eth0", "pods", List.of(pool), null).ip();
    assertThat(call(rig, "DEL", first, "eth0", "pods", List.of(pool), null).ok()).isTrue();
    long released = System.nanoTime();

    Pod second = pod(rig, namespaces.get(1), Map.of());
    CniCall.Outcome early = call(rig, "ADD", second, "eth0", "pods", List.of(pool), x);
    System.out.println("IP=" + x + " right after its release: " + early.stdout());
    assertThat(early.stdout())
        .contains("\"code\":11,")
        .contains("rests for the pool's reuse delay");
    Pod beside = pod(rig, namespaces.get(2), Map.of());
    String dynamic = call(rig, "ADD", beside, "eth0", "pods", List.of(pool), null).ip();
    assertThat(dynamic).as("a dynamic ADD beside it").isNotEqualTo(x);

    CniCall.Outcome later =
        CniCall.whileTryAgain(
            () -> call(rig, "ADD", second, "eth0", "pods", List.of(pool), x),
            Duration.ofSeconds(90));
    double after = (System.nanoTime() - released) / 1e9;
    System.out.printf("IP=%s given to %s %.1f s after its release%n", x, namespaces.get(1), after);
    assertThat(later.ok()).as(later.stdout()).isTrue();
    assertThat(later.ip()).isEqualTo(x);
  }

  /**
   * Measured before: each chosen address inside another node's slot turned that slot Shared for
   * good, a refused one too. An address an IPAddress holds is refused at once and asks nothing.
   */
  @Test
  void aHeldAddressInAnotherNodesSlotIsRefusedWithoutTurningTheSlotShared() throws Exception {
    String pool = Cluster.readiedPool(client, "held", Cluster.spec("10.218.0.0/26", 28, 0));
    List<NodeRig> two = new ArrayList<>(rigs);
    Collections.shuffle(two, random);
    NodeRig holderRig = two.get(0);
    NodeRig askerRig = two.get(1);
    Pod holder = pod(holderRig, namespaces.get(0), Map.of());
    String x = setup(holderRig, holder, "eth0", "pods", List.of(pool), null).ip();
    IPBlock slot = holderRig.blockOf(pool, x).orElseThrow();

    Pod asker = pod(askerRig, namespaces.get(1), Map.of());
    CniCall.Outcome asked = call(askerRig, "ADD", asker, "eth0", "pods", List.of(pool), x);
    System.out.println("IP=" + x + " held in " + holderRig.node + "'s slot: " + asked.stdout());
    assertThat(asked.stdout())
        .contains("\"code\":104,")
        .contains("is held by pod " + namespaces.get(0) + "/" + holder.getMetadata().getName());

    // kipam-operator rechecks demand every few seconds: give it the time to act, had it been asked.
    Thread.sleep(8_000);
    IPBlock after = client.resources(IPBlock.class).withName(slot.getMetadata().getName()).get();
    assertThat(after.getStatus() == null ? null : after.getStatus().getMode())
        .as("slot " + slot.getSpec().getCidr() + " stays Exclusive")
        .isNotEqualTo(BlockMode.Shared);
    Node asking = client.nodes().withName(askerRig.node).get();
    String demand =
        asking.getMetadata().getAnnotations() == null
            ? ""
            : asking
                .getMetadata()
                .getAnnotations()
                .getOrDefault(ApiConstants.ANNOTATION_DEMAND, "");
    assertThat(demand).as("demand of " + askerRig.node).doesNotContain(slot.getSpec().getCidr());
  }

  /**
   * Measured before: an IPv6 /64 pool whose range holds 48 addresses in 3 slots gave 0 of 2 pods an
   * address in 29 s (code 11, "no unclaimed block is left", though none was claimed).
   */
  @Test
  void aSmallRangeOfAnIpv6Slash64ServesAtOnce() throws Exception {
    IPPoolSpec spec = Cluster.spec("fd00:21:7::/64", 124, 0);
    spec.setRangeStart("fd00:21:7::a000");
    spec.setRangeEnd("fd00:21:7::a02f");
    String pool = Cluster.readiedPool(client, "ranged", spec);
    for (int i = 0; i < 2; i++) {
      NodeRig rig = rigs.get(i);
      Pod pod = pod(rig, namespaces.get(i), Map.of());
      long start = System.nanoTime();
      // Only "not watched yet" (101) is waited out: "try again" (11) is what this test is about.
      CniCall.Outcome added = retried(rig, pod, "eth0", "pods", List.of(pool), null, "101");
      System.out.printf(
          "pod %d on %s: %s in %.2f s%n",
          i, rig.node, added.ip(), (System.nanoTime() - start) / 1e9);
      assertThat(added.ok()).as(added.stdout()).isTrue();
      java.math.BigInteger at = IpAddress.parse(added.ip()).toBigInteger();
      assertThat(
              at.compareTo(IpAddress.parse("fd00:21:7::a000").toBigInteger()) >= 0
                  && at.compareTo(IpAddress.parse("fd00:21:7::a02f").toBigInteger()) <= 0)
          .as(added.ip() + " lies in the range")
          .isTrue();
    }
  }

  private String pool(String prefix, String cidr, String network) {
    IPPoolSpec spec = Cluster.spec(cidr, 28, 0);
    spec.setNetwork(network);
    String name = Fixtures.uniqueName(prefix);
    Cluster.poolOnItsNetworkReadiedByOperator(client, name, spec);
    return name;
  }

  private void annotate(String namespace, Map<String, String> annotations) {
    client
        .namespaces()
        .withName(namespace)
        .edit(
            n -> {
              n.getMetadata().setAnnotations(new HashMap<>(annotations));
              return n;
            });
  }

  private NodeRig rig() {
    return rigs.get(random.nextInt(rigs.size()));
  }

  private Pod pod(NodeRig rig, String namespace, Map<String, String> annotations) {
    return client
        .pods()
        .inNamespace(namespace)
        .resource(
            Cluster.podOn("gate-" + (pods++), rig.node)
                .editMetadata()
                .withAnnotations(annotations)
                .endMetadata()
                .build())
        .create();
  }

  /** An ADD of the set-up: retried while 11 or 101, as a runtime retries a sandbox. */
  private CniCall.Outcome setup(
      NodeRig rig, Pod pod, String ifName, String network, List<String> pools, String ip) {
    return retried(rig, pod, ifName, network, pools, ip, "11|101");
  }

  /**
   * An ADD retried while it answers one of {@code codes} (a regular expression of them), for up to
   * {@link #SETUP_RETRIES}; any other failure fails the test at once.
   */
  private CniCall.Outcome retried(
      NodeRig rig,
      Pod pod,
      String ifName,
      String network,
      List<String> pools,
      String ip,
      String codes) {
    long deadline = System.nanoTime() + SETUP_RETRIES.toNanos();
    CniCall.Outcome outcome = call(rig, "ADD", pod, ifName, network, pools, ip);
    while (!outcome.ok() && System.nanoTime() < deadline) {
      assertThat(outcome.stdout()).matches("(?s).*\"code\":(" + codes + "),.*");
      java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L);
      outcome = call(rig, "ADD", pod, ifName, network, pools, ip);
    }
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    return outcome;
  }

  private CniCall.Outcome call(
      NodeRig rig,
      String command,
      Pod pod,
      String ifName,
      String network,
      List<String> pools,
      String ip) {
    Map<String, String> env =
        CniCall.env(command, "c-" + pod.getMetadata().getUid(), ifName, pod, ip);
    StringBuilder list = new StringBuilder();
    for (String p : pools) {
      list.append(list.length() == 0 ? "" : ",").append('"').append(p).append('"');
    }
    String config =
        "{\"cniVersion\":\"1.1.0\",\"name\":\""
            + network
            + "\",\"type\":\"bridge\",\"ipam\":{\"type\":\"kipam\",\"pools\":["
            + list
            + "],\"socket\":\""
            + rig.daemon.socket
            + "\"}}";
    return CniCall.run(rig.kipam, env, config);
  }

  private String poolOf(Pod pod, String ip) {
    return Cluster.addressesOf(client, pod).stream()
        .filter(a -> a.getSpec().getIp().equals(ip))
        .map(a -> a.getSpec().getPool())
        .findFirst()
        .orElse(null);
  }

  private static boolean in(String ip, String cidr) {
    return Cidr.parse(cidr).contains(IpAddress.parse(ip));
  }
}
