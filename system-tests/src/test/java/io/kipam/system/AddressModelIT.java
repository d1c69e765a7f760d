package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.AddressSteps;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.StepTrail;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The model-based test's generator ({@link AddressSteps}, which {@code AddressModelTest} runs
 * against the fakes) against a real control plane, three kipam-node processes and kipam-operator:
 * dynamic, chosen, claimed and pool-annotated ADDs through the real {@code kipam} executable, DELs,
 * pods deleted with their DELs and force-deleted (the garbage collector takes their addresses),
 * IPAMClaims deleted (kipam-operator gives their addresses back), a pool deleted (and made again
 * once gone) and time passing, over three namespaces and two networks whose pools overlap. After
 * every step, read from the API: one holder per address per network, no address outside its pool's
 * network, the reuse delay held for every change of holder, at most one address per claim and pool,
 * and no code 100 while the node could obtain an address.
 *
 * <p>The pools rest released addresses 3 s (1 s for the annotated one) and time passes a tenth as
 * fast as the generator says, so 500 steps take minutes; {@code AddressModelTest} keeps the
 * product's 30 s. Seeded: {@code -Dkipam.seed=N} replays the steps, {@code -Dkipam.model.itSteps=N}
 * sets their number (500).
 */
class AddressModelIT implements AddressSteps.Actions {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final int STEPS = Integer.getInteger("kipam.model.itSteps", 500);

  /** How long after the pool counted it a freed address may still be missing from the count. */
  private static final Duration COUNT_LAG = Duration.ofSeconds(15);

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("model");
  private List<NodeRig> rigs;
  private final SeededRandom seeded = new SeededRandom();
  private final Map<String, String> poolNetworks = new LinkedHashMap<>();
  private final Map<String, PoolLayout> layouts = new HashMap<>();
  private final Map<String, Duration> reuse = new HashMap<>();
  private final Map<String, PodAt> pods = new LinkedHashMap<>();
  private final Map<String, String> claimUids = new LinkedHashMap<>();
  private final StepTrail trail = new StepTrail();
  private final Map<String, Held> held = new HashMap<>();
  private final Map<String, Released> released = new HashMap<>();
  private List<String> namespaces;
  private String podsA;
  private String podsB;
  private String blueA;
  private boolean poolDeleted;
  private int step;
  private int podCount;

  /** A pod, on which node it is bound. */
  private record PodAt(Pod pod, NodeRig rig) {}

  /** Who held an address at the last snapshot that showed it held, and when that was. */
  private record Held(String holder, long seenAt) {}

  /**
   * An address let go by {@code holder}: held at {@code heldUntil} at the latest, free at {@code
   * freeBy} at the latest (both nanoTime).
   */
  private record Released(String holder, long heldUntil, long freeBy, Duration delay) {}

  @BeforeEach
  void start() throws Exception {
    seeded.print("AddressModelIT");
    KipamCrds.installIpamClaims(client);
    String primary = Fixtures.uniqueName("prim");
    podsA = pool("pods-a", "10.222.0.0/27", primary, 3);
    podsB = pool("pods-b", "10.222.0.32/28", primary, 1);
    blueA = pool("blue-a", "10.222.0.0/27", Fixtures.uniqueName("blue"), 3);
    namespaces = processes.namespaces;
    annotate(namespaces.get(2), ApiConstants.ANNOTATION_POOLS, podsB);
    annotate(namespaces.get(1), ApiConstants.ANNOTATION_POOLS, blueA); // another network's pool
    for (String namespace : namespaces) {
      for (int c = 0; c < 2; c++) {
        claim(namespace, "vm-" + c);
      }
    }
    rigs = processes.nodes(podsA, 3, Map.of());
  }

  @Test
  void everyWayToAnAddressKeepsTheInvariantsOnARealControlPlane() throws Exception {
    AddressSteps steps = new AddressSteps(seeded.seed());
    AddressSteps.Actions actions = this;
    snapshot();
    long start = System.nanoTime();
    for (step = 1; step <= STEPS; step++) {
      AddressSteps.apply(steps.next(), actions);
      snapshot();
    }
    System.out.printf(
        "AddressModelIT: %d steps in %.0f s: %s%n",
        STEPS, (System.nanoTime() - start) / 1e9, trail.outcomes());
    assertThat(trail.outcomes().keySet())
        .as("every kind of ADD succeeded at least once")
        .contains("added dynamic", "added chosen", "added claimed");
  }

  // ---- the steps ----

  @Override
  public void add(AddressSteps.Add add) {
    PodAt at = pod(add);
    boolean primary = add.network() == AddressSteps.Network.PRIMARY;
    String network = primary ? "pods" : "blue";
    String chosen = add.asksByName() ? "10.222.0." + AddressSteps.pick(add.chosen(), 64) : null;
    String what =
        "ADD "
            + network
            + " of "
            + name(at.pod())
            + " on "
            + at.rig().node
            + (chosen == null ? "" : " IP=" + chosen)
            + " "
            + at.pod().getMetadata().getAnnotations();
    CniCall.Outcome outcome = call(at, "ADD", add.network().ifName(), network, chosen);
    note(what + " -> " + (outcome.ok() ? outcome.ips() : outcome.stdout()));
    if (outcome.ok()) {
      String kind =
          at.pod().getMetadata().getAnnotations().containsKey("k8s.v1.cni.cncf.io/networks")
                  && primary
              ? "claimed"
              : chosen != null ? "chosen" : "dynamic";
      count("added " + kind);
      return;
    }
    String code = outcome.stdout().replaceAll("(?s).*\"code\":(\\d+),.*", "$1");
    String msg = outcome.stdout().replaceAll("(?s).*\"msg\":\"([^\"]*)\".*", "$1");
    count(
        "code "
            + code
            + (msg.contains("being deleted")
                ? " (pool being deleted)"
                : msg.contains("not Ready") ? " (pool not Ready)" : ""));
    if (code.equals("100")) {
      List<String> pools = primary ? List.of(podsA, podsB) : List.of(blueA);
      for (String pool : pools) {
        String free = obtainable(at.rig().node, pool);
        if (free != null) {
          fail(
              "seed %d, step %d: %s was told code 100 while %s could obtain %s of %s%n%s",
              seeded.seed(), step, what, at.rig().node, free, pool, trail.recent());
        }
      }
    }
  }

  private PodAt pod(AddressSteps.Add add) {
    if (add.newPod() || pods.size() < 6) {
      String namespace = namespaces.get(add.namespace());
      NodeRig rig = rigs.get(add.node());
      Map<String, String> annotations = new HashMap<>();
      switch (add.template()) {
        case OWN_NETWORK_POOL -> annotations.put(ApiConstants.ANNOTATION_POOLS, podsB);
        case BOTH_NETWORKS_POOLS ->
            annotations.put(ApiConstants.ANNOTATION_POOLS, blueA + "," + podsB);
        case OTHER_NETWORKS_POOL -> annotations.put(ApiConstants.ANNOTATION_IPV4_POOLS, blueA);
        case CLAIMED ->
            annotations.put(
                "k8s.v1.cni.cncf.io/networks",
                "[{\"name\":\"pods\",\"interface\":\"eth0\",\"ipam-claim-reference\":\"vm-"
                    + add.claim()
                    + "\"}]");
        case PLAIN -> {}
      }
      Pod pod =
          client
              .pods()
              .inNamespace(namespace)
              .resource(
                  Cluster.podOn("model-" + (podCount++), rig.node)
                      .editMetadata()
                      .withAnnotations(annotations)
                      .endMetadata()
                      .build())
              .create();
      PodAt at = new PodAt(pod, rig);
      pods.put(name(pod), at);
      return at;
    }
    List<PodAt> live = new ArrayList<>(pods.values());
    return live.get(AddressSteps.pick(add.pod(), live.size()));
  }

  @Override
  public void del(double which) {
    List<IPAddress> all = addresses();
    if (all.isEmpty()) {
      return;
    }
    all.sort(
        Comparator.comparing((IPAddress a) -> a.getSpec().getNode())
            .thenComparing(a -> a.getSpec().getPool())
            .thenComparing(a -> a.getSpec().getIp()));
    IPAddress address = all.get(AddressSteps.pick(which, all.size()));
    PodAt at =
        pods.get(address.getMetadata().getNamespace() + "/" + address.getSpec().getPod().getName());
    if (at == null) {
      return; // its pod is being deleted: the garbage collector takes the address
    }
    CniCall.Outcome outcome =
        call(at, "DEL", address.getSpec().getInterfaceName(), address.getSpec().getNetwork(), null);
    note("DEL " + address.getSpec().getIp() + " of " + name(at.pod()) + " -> " + outcome.stdout());
    count(outcome.ok() ? "del" : "del refused");
  }

  @Override
  public void deletePod(double which, boolean forced) {
    if (pods.isEmpty()) {
      return;
    }
    List<PodAt> live = new ArrayList<>(pods.values());
    PodAt at = live.get(AddressSteps.pick(which, live.size()));
    pods.remove(name(at.pod()));
    if (!forced) {
      call(at, "DEL", "eth0", "pods", null);
      call(at, "DEL", "net1", "blue", null);
    }
    client.resource(at.pod()).withGracePeriod(0).delete();
    note((forced ? "force-delete " : "DELs, then delete ") + name(at.pod()));
    count(forced ? "pod force-deleted" : "pod deleted");
  }

  @Override
  public void deleteClaim(double which) {
    List<String> names = new ArrayList<>(claimUids.keySet());
    String key = names.get(AddressSteps.pick(which, names.size()));
    boolean attached =
        addresses().stream()
            .anyMatch(
                a ->
                    a.getSpec().getClaim() != null
                        && (a.getMetadata().getNamespace() + "/" + a.getSpec().getClaim())
                            .equals(key));
    if (attached) {
      return;
    }
    String namespace = key.substring(0, key.indexOf('/'));
    String name = key.substring(key.indexOf('/') + 1);
    client.resources(IPAMClaim.class).inNamespace(namespace).withName(name).delete();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client.resources(IPAMClaim.class).inNamespace(namespace).withName(name).get()
                    == null);
    claim(namespace, name);
    note("IPAMClaim " + key + " deleted and made again");
    count("claim deleted");
  }

  /** The annotated pool is deleted; once it is gone (its addresses released), made again. */
  @Override
  public void deletePool() {
    if (!poolDeleted) {
      poolDeleted = true;
      client.resources(IPPool.class).withName(podsB).delete();
      note("IPPool " + podsB + " deleted");
      count("pool deleted");
    } else if (client.resources(IPPool.class).withName(podsB).get() == null) {
      poolDeleted = false;
      IPPoolSpec spec = Cluster.spec("10.222.0.32/28", 29, 1);
      spec.setNetwork(poolNetworks.get(podsB));
      Cluster.poolOnItsNetworkReadiedByOperator(client, podsB, spec);
      note("IPPool " + podsB + " made again");
      count("pool made again");
    }
  }

  /** Time passes, a tenth as fast as the generator says. */
  @Override
  public void pass(Duration time) {
    try {
      Thread.sleep(time.toMillis() / 10);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  // ---- what the API shows, and the invariants ----

  private void snapshot() {
    long now = System.nanoTime();
    Map<String, String> holders = new HashMap<>();
    Map<String, Set<String>> perClaim = new HashMap<>();
    for (IPAddress address : addresses()) {
      String pool = address.getSpec().getPool();
      String expected =
          address.getSpec().getNetwork().equals("pods")
              ? poolNetworks.get(podsA)
              : poolNetworks.get(blueA);
      if (!poolNetworks.get(pool).equals(expected)) {
        fail(
            "seed %d, step %d: %s of pool %s given to an interface of network %s%n%s",
            seeded.seed(),
            step,
            address.getSpec().getIp(),
            pool,
            address.getSpec().getNetwork(),
            trail.recent());
      }
      String claim = address.getSpec().getClaim();
      String holder =
          claim != null
              ? "claim " + address.getMetadata().getNamespace() + "/" + claim
              : "pod " + address.getSpec().getPod().getUid();
      put(holders, poolNetworks.get(pool) + "|" + address.getSpec().getIp(), holder);
      if (claim != null) {
        perClaim
            .computeIfAbsent(
                claimUids.get(address.getMetadata().getNamespace() + "/" + claim) + " in " + pool,
                k -> new HashSet<>())
            .add(address.getSpec().getIp());
      }
    }
    for (String pool : poolNetworks.keySet()) {
      for (IPBlock block : Cluster.blocks(client, pool)) {
        var ref = block.getSpec().getClaim();
        if (ref == null) {
          continue;
        }
        String ip = Cidr.parse(block.getSpec().getCidr()).network().toString();
        String key = ref.getNamespace() + "/" + ref.getName();
        boolean current =
            ref.getUid().equals(claimUids.get(key))
                && block.getMetadata().getDeletionTimestamp() == null;
        put(
            holders,
            poolNetworks.get(pool) + "|" + ip,
            (current ? "claim " : "deleted claim ") + key);
        if (current) {
          perClaim.computeIfAbsent(ref.getUid() + " in " + pool, k -> new HashSet<>()).add(ip);
        }
      }
    }
    perClaim.forEach(
        (claim, ips) ->
            assertThat(ips)
                .as(
                    "seed %d, step %d: IPAMClaim (UID) %s%n%s",
                    seeded.seed(), step, claim, trail.recent())
                .hasSizeLessThanOrEqualTo(1));
    for (var before : Map.copyOf(held).entrySet()) {
      String now_ = holders.get(before.getKey());
      if (!before.getValue().holder().equals(now_)
          && !before.getValue().holder().startsWith("deleted claim ")) {
        released.put(
            before.getKey(),
            new Released(
                before.getValue().holder(),
                before.getValue().seenAt(),
                now,
                delayOf(before.getKey())));
      }
    }
    for (var after : holders.entrySet()) {
      Held before = held.get(after.getKey());
      if ((before != null && before.holder().equals(after.getValue()))
          || after.getValue().startsWith("deleted claim ")) {
        continue;
      }
      Released last = released.get(after.getKey());
      // Certainly too early: even from the last moment it was seen held, less than the delay.
      if (last != null
          && !last.holder().equals(after.getValue())
          && now - last.heldUntil() < last.delay().toNanos()) {
        fail(
            "seed %d, step %d: %s went to %s at most %d ms after %s held it (reuse delay %d s)%n%s",
            seeded.seed(),
            step,
            after.getKey(),
            after.getValue(),
            (now - last.heldUntil()) / 1_000_000,
            last.holder(),
            last.delay().toSeconds(),
            trail.recent());
      }
    }
    held.keySet().retainAll(holders.keySet());
    holders.forEach((key, holder) -> held.put(key, new Held(holder, now)));
  }

  private void put(Map<String, String> holders, String key, String holder) {
    String previous = holders.put(key, holder);
    if (previous != null && !previous.equals(holder)) {
      fail(
          "seed %d, step %d: %s (network|address) held twice: by %s and by %s%n%s",
          seeded.seed(), step, key, previous, holder, trail.recent());
    }
  }

  /**
   * An address of {@code pool} that {@code node} could certainly obtain: never held or free for
   * longer than the reuse delay and the count's lag, in a slot nobody holds, an Exclusive slot of
   * the node, or a Shared slot.
   */
  private String obtainable(String node, String pool) {
    long now = System.nanoTime();
    List<IPBlock> blocks = Cluster.blocks(client, pool);
    Set<String> slotsTaken = new HashSet<>();
    Set<String> reachable = new HashSet<>();
    Set<String> subClaimed = new HashSet<>();
    for (IPBlock block : blocks) {
      if (block.getSpec().getParent() != null || block.getSpec().getClaim() != null) {
        subClaimed.add(Cidr.parse(block.getSpec().getCidr()).network().toString());
        continue;
      }
      slotsTaken.add(block.getSpec().getCidr());
      boolean shared =
          block.getSpec().getNode() == null
              || (block.getStatus() != null && block.getStatus().getMode() == BlockMode.Shared);
      if (block.getMetadata().getDeletionTimestamp() == null
          && (shared || node.equals(block.getSpec().getNode()))) {
        reachable.add(block.getSpec().getCidr());
      }
    }
    PoolLayout layout = layouts.get(pool);
    String network = poolNetworks.get(pool);
    for (Cidr slot : layout.usableBlocks()) {
      if (slotsTaken.contains(slot.toString()) && !reachable.contains(slot.toString())) {
        continue;
      }
      for (IpAddress ip : layout.assignable(slot)) {
        String key = network + "|" + ip;
        Released last = released.get(key);
        boolean rested =
            last == null || now - last.freeBy() > last.delay().plus(COUNT_LAG).toNanos();
        if (!held.containsKey(key) && rested && !subClaimed.contains(ip.toString())) {
          return ip.toString();
        }
      }
    }
    return null;
  }

  private Duration delayOf(String key) {
    IpAddress ip = IpAddress.parse(key.substring(key.indexOf('|') + 1));
    String network = key.substring(0, key.indexOf('|'));
    return poolNetworks.entrySet().stream()
        .filter(e -> e.getValue().equals(network) && layouts.get(e.getKey()).cidr().contains(ip))
        .map(e -> reuse.get(e.getKey()))
        .findFirst()
        .orElse(Duration.ZERO);
  }

  // ---- the cluster ----

  private String pool(String prefix, String cidr, String network, int reuseSeconds) {
    IPPoolSpec spec = Cluster.spec(cidr, 29, reuseSeconds);
    spec.setNetwork(network);
    String name = Fixtures.uniqueName(prefix);
    Cluster.poolOnItsNetworkReadiedByOperator(client, name, spec);
    poolNetworks.put(name, network);
    layouts.put(name, PoolLayout.builder().cidr(cidr).blockSize(29).build());
    reuse.put(name, Duration.ofSeconds(reuseSeconds));
    return name;
  }

  private void annotate(String namespace, String key, String value) {
    client
        .namespaces()
        .withName(namespace)
        .edit(
            n -> {
              n.getMetadata().setAnnotations(new HashMap<>(Map.of(key, value)));
              return n;
            });
  }

  private void claim(String namespace, String name) {
    IPAMClaim claim = new IPAMClaim();
    claim.getMetadata().setName(name);
    claim.getMetadata().setNamespace(namespace);
    claim.setSpec(new IPAMClaimSpec("pods", "eth0"));
    IPAMClaim created = client.resource(claim).create();
    claimUids.put(namespace + "/" + name, created.getMetadata().getUid());
  }

  private List<IPAddress> addresses() {
    List<IPAddress> all = new ArrayList<>();
    for (String pool : poolNetworks.keySet()) {
      all.addAll(Cluster.addresses(client, pool));
    }
    return all;
  }

  private CniCall.Outcome call(PodAt at, String command, String ifName, String network, String ip) {
    Pod pod = at.pod();
    Map<String, String> env =
        CniCall.env(command, "c-" + pod.getMetadata().getUid(), ifName, pod, ip);
    String pool = network.equals("pods") ? podsA : blueA;
    String config =
        "{\"cniVersion\":\"1.1.0\",\"name\":\""
            + network
            + "\",\"type\":\"bridge\",\"allowPersistentIPs\":true,\"ipam\":{\"type\":\"kipam\","
            + "\"pools\":[\""
            + pool
            + "\"],\"socket\":\""
            + at.rig().daemon.socket
            + "\"}}";
    return CniCall.run(at.rig().kipam, env, config);
  }

  private void note(String what) {
    trail.note(step, what);
  }

  private void count(String outcome) {
    trail.count(outcome);
  }

  private static String name(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }
}
