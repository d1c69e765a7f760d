package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.system.harness.ChurnAndSample;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Chosen (static) addresses: in the node's own block, in an unclaimed slot (claimed Shared from
 * birth), refused while in another node's Exclusive slot (try again); asked for through {@code
 * runtimeConfig.ips}, {@code IP=} in CNI_ARGS and the pod annotation {@code kipam.io/ips};
 * dual-stack both or neither; an address another pod holds refused naming that pod. Three
 * kipam-node processes and kipam-operator, pods over three namespaces; ordinary pods churn through
 * the same pool, and its IPAddresses are sampled for an address held twice. Seeded ({@code
 * -Dkipam.seed=N}): which nodes and namespaces play each part.
 */
class StaticAddressIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final Duration RETRIES = Duration.ofSeconds(60);

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("static");
  private List<NodeRig> rigs;
  private final SeededRandom random = new SeededRandom();
  private ChurnAndSample meanwhile;
  private ChurnAndSample sampled;
  private String pool;
  private String six;
  private List<String> namespaces;
  private int pods;

  @BeforeEach
  void start() throws Exception {
    random.print("StaticAddressIT");
    pool = Cluster.readiedPool(client, "static", Cluster.spec("10.213.0.0/24", 28, 0));
    six = Cluster.readiedPool(client, "static6", Cluster.spec("fd00:214::/120", 124, 0));
    namespaces = processes.namespaces;
    rigs = processes.nodes(pool, 3, Map.of());
    Collections.shuffle(rigs, random);
    // Ordinary pods churn through a pool of their own: one of them could take a chosen address
    // first, which is right but makes the outcome a race.
    String churn =
        Cluster.readiedPool(client, "static-churn", Cluster.spec("10.213.8.0/24", 28, 0));
    meanwhile = ChurnAndSample.start(client, churn, rigs);
    sampled = ChurnAndSample.start(client, pool, List.of());
  }

  @AfterEach
  void stopAll() throws Exception {
    ChurnAndSample.check("StaticAddressIT", meanwhile, sampled);
  }

  @Test
  void aChosenAddressInTheNodesBlockInAnUnclaimedSlotAndInAnotherNodesSlot() throws Exception {
    NodeRig a = rigs.get(0);
    NodeRig b = rigs.get(1);
    // a's own block: a free address of a slot a holds.
    Pod first = pod(a, Map.of());
    String dynamic =
        CniCall.whileTryAgain(() -> call(a, "ADD", first, List.of(pool), "", ""), RETRIES).ip();
    Cidr slot = Cidr.parse(a.blockOf(pool, dynamic).orElseThrow().getSpec().getCidr());
    String own = freeIn(slot, dynamic);
    Pod inOwn = pod(a, Map.of());
    assertThat(call(a, "ADD", inOwn, List.of(pool), "[\"" + own + "/24\"]", "").ips())
        .containsExactly(own);
    assertThat(address(inOwn).getSpec().getNode()).isEqualTo(a.node);

    // An unclaimed slot: b claims it Shared from birth and sub-claims the address.
    Cidr free = unclaimedSlot();
    String unclaimed =
        free.network().toString().replaceAll("\\.\\d+$", "") + "." + (last(free) + 10);
    Pod inUnclaimed = pod(b, Map.of());
    assertThat(call(b, "ADD", inUnclaimed, List.of(pool), "", "IP=" + unclaimed).ips())
        .containsExactly(unclaimed);
    IPBlock parent =
        client.resources(IPBlock.class).withName(ResourceNames.blockName(pool, free)).get();
    assertThat(parent.getSpec().getNode()).as("claimed Shared from birth").isNull();

    // Another node's Exclusive slot: try again while it is not Shared; its holder converts it
    // when kipam-operator asks (b recorded its demand for that slot), then b gets the address.
    String theirs = freeIn(slot, dynamic, own);
    Pod inTheirs = pod(b, Map.of());
    CniCall.Outcome wait = call(b, "ADD", inTheirs, List.of(pool), "[\"" + theirs + "\"]", "");
    assertThat(wait.stdout())
        .contains("\"code\":11,")
        .contains("address " + theirs)
        .contains("held Exclusive by a node");
    assertThat(Cluster.addressesOf(client, inTheirs)).isEmpty();
    long asked = System.nanoTime();
    CniCall.Outcome converted =
        CniCall.whileTryAgain(
            () -> call(b, "ADD", inTheirs, List.of(pool), "[\"" + theirs + "\"]", ""),
            Duration.ofSeconds(30));
    assertThat(converted.ips()).containsExactly(theirs);
    System.out.printf(
        "%s in %s's slot %s: given to a pod on %s %.1f s after its first try%n",
        theirs, a.node, slot, b.node, (System.nanoTime() - asked) / 1e9);
    assertThat(client.resources(IPBlock.class).withName(ResourceNames.blockName(pool, slot)).get())
        .satisfies(s -> assertThat(s.getStatus().getMode()).hasToString("Shared"));
    assertThat(address(inOwn).getSpec().getIp()).as("a's pod keeps its address").isEqualTo(own);

    // DEL gives a chosen address back like any other.
    assertThat(call(b, "DEL", inUnclaimed, List.of(pool), "", "").ok()).isTrue();
    assertThat(Cluster.addressesOf(client, inUnclaimed)).isEmpty();
    System.out.println(
        "own block " + own + " on " + a.node + ", unclaimed slot " + unclaimed + " on " + b.node);
  }

  @Test
  void eachWayOfAskingWorksDualStackGetsBothOrNeitherAndAHeldAddressIsRefused() throws Exception {
    NodeRig r = rigs.get(0);
    // runtimeConfig.ips, dual-stack.
    Pod both = pod(r, Map.of());
    assertThat(
            (call(r, "ADD", both, List.of(pool, six), "[\"10.213.0.201\",\"fd00:214::21\"]", ""))
                .ips())
        .containsExactly("10.213.0.201", "fd00:214::21");
    // The annotation kipam.io/ips, on another node and namespace.
    NodeRig s = rigs.get(1);
    Pod annotated = pod(s, Map.of(ApiConstants.ANNOTATION_IPS, "10.213.0.202"));
    assertThat(call(s, "ADD", annotated, List.of(pool), "", "").ips())
        .containsExactly("10.213.0.202");

    // Held by another pod in another namespace: refused naming it, nothing written.
    NodeRig t = rigs.get(2);
    Pod thief = pod(t, Map.of());
    CniCall.Outcome held = call(t, "ADD", thief, List.of(pool), "", "IP=10.213.0.202");
    assertThat(held.stdout())
        .contains("\"code\":104,")
        .contains("address 10.213.0.202")
        .contains(
            "pod "
                + annotated.getMetadata().getNamespace()
                + "/"
                + annotated.getMetadata().getName());
    assertThat(Cluster.addressesOf(client, thief)).isEmpty();

    // Dual-stack, one of the two held: neither is allocated.
    Pod half = pod(t, Map.of());
    CniCall.Outcome neither =
        call(t, "ADD", half, List.of(pool, six), "[\"10.213.0.203\",\"fd00:214::21\"]", "");
    assertThat(neither.stdout()).contains("\"code\":104,").contains("fd00:214::21");
    assertThat(Cluster.addressesOf(client, half)).isEmpty();
    assertThat(
            client
                .resources(IPAddress.class)
                .inAnyNamespace()
                .withLabel(ApiConstants.LABEL_POOL, pool)
                .list()
                .getItems())
        .noneMatch(a -> a.getSpec().getIp().equals("10.213.0.203"));

    // Bad requests: two places that differ, outside every pool, malformed.
    Pod bad = pod(t, Map.of(ApiConstants.ANNOTATION_IPS, "10.213.0.204"));
    assertThat(call(t, "ADD", bad, List.of(pool), "", "IP=10.213.0.205").stdout())
        .contains("\"code\":7,")
        .contains("asked for in two places that differ");
    Pod outside = pod(t, Map.of());
    assertThat(call(t, "ADD", outside, List.of(pool), "[\"10.99.0.1\"]", "").stdout())
        .contains("\"code\":7,")
        .contains("address 10.99.0.1 lies in no pool");
    Pod malformed = pod(t, Map.of(ApiConstants.ANNOTATION_IPS, "10.213.0.300"));
    assertThat(call(t, "ADD", malformed, List.of(pool), "", "").stdout())
        .contains("\"code\":7,")
        .contains("annotation kipam.io/ips")
        .contains("'10.213.0.300', which is not an IP address");
    for (Pod p : List.of(bad, outside, malformed)) {
      assertThat(Cluster.addressesOf(client, p)).isEmpty();
    }
  }

  // ---- helpers ----

  private Pod pod(NodeRig rig, Map<String, String> annotations) {
    String namespace = namespaces.get(random.nextInt(namespaces.size()));
    return client
        .pods()
        .inNamespace(namespace)
        .resource(
            Cluster.podOn("static-" + (pods++), rig.node)
                .editMetadata()
                .withAnnotations(annotations)
                .endMetadata()
                .build())
        .create();
  }

  /**
   * A CNI call for {@code pod}'s eth0 with {@code runtimeIps} (a JSON list, or empty) in
   * runtimeConfig and {@code extraArgs} (such as {@code IP=...}) in CNI_ARGS.
   */
  private CniCall.Outcome call(
      NodeRig rig,
      String command,
      Pod pod,
      List<String> pools,
      String runtimeIps,
      String extraArgs) {
    Map<String, String> env =
        new java.util.HashMap<>(CniCall.env(command, "c-" + pod.getMetadata().getUid(), pod));
    if (!extraArgs.isEmpty()) {
      env.put("CNI_ARGS", env.get("CNI_ARGS") + ";" + extraArgs);
    }
    String config =
        "{\"cniVersion\":\"1.1.0\",\"name\":\"kipam-test\",\"type\":\"bridge\","
            + (runtimeIps.isEmpty() ? "" : "\"runtimeConfig\":{\"ips\":" + runtimeIps + "},")
            + "\"ipam\":{\"type\":\"kipam\",\"pools\":[\""
            + String.join("\",\"", pools)
            + "\"],\"socket\":\""
            + rig.daemon.socket
            + "\"}}";
    return CniCall.run(rig.kipam, env, config);
  }

  private IPAddress address(Pod pod) {
    List<IPAddress> of = Cluster.addressesOf(client, pod);
    assertThat(of).hasSize(1);
    return of.get(0);
  }

  /** An address of {@code slot} that no IPAddress holds, other than {@code not}. */
  private String freeIn(Cidr slot, String... not) {
    List<String> held =
        client
            .resources(IPAddress.class)
            .inAnyNamespace()
            .withLabel(ApiConstants.LABEL_POOL, pool)
            .list()
            .getItems()
            .stream()
            .map(a -> a.getSpec().getIp())
            .toList();
    long base = Long.parseLong(slot.network().toString().replaceAll(".*\\.", ""));
    for (long i = 13; i >= 2; i--) {
      String ip = slot.network().toString().replaceAll("\\.\\d+$", "") + "." + (base + i);
      if (!held.contains(ip) && !List.of(not).contains(ip)) {
        return ip;
      }
    }
    throw new IllegalStateException("no free address left in " + slot);
  }

  /** A /28 slot of the pool that no block covers. */
  private Cidr unclaimedSlot() {
    List<IPBlock> blocks =
        client.resources(IPBlock.class).withLabel(ApiConstants.LABEL_POOL, pool).list().getItems();
    for (int i = 15; i >= 0; i--) {
      Cidr slot = Cidr.parse("10.213.0." + (i * 16) + "/28");
      boolean taken =
          blocks.stream().anyMatch(b -> Cidr.parse(b.getSpec().getCidr()).contains(slot.network()));
      if (!taken) {
        return slot;
      }
    }
    throw new IllegalStateException("every slot of " + pool + " is claimed");
  }

  private static long last(Cidr slot) {
    return Long.parseLong(slot.network().toString().replaceAll(".*\\.", ""));
  }
}
