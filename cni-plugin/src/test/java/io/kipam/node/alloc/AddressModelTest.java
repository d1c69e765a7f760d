package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.net.ResourceNames;
import io.kipam.cni.spec.CniException;
import io.kipam.cni.spec.CniRequest;
import io.kipam.node.kube.MapPoolDirectory;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PodSummary;
import io.kipam.node.request.AddRequests;
import io.kipam.node.request.NetworkSelection;
import io.kipam.testing.AddressSteps;
import io.kipam.testing.StepTrail;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * A model-based test of every way to an address, against the fakes (design §4.8, §5c): seeded
 * random sequences of dynamic, chosen ({@code IP=}), claimed (IPAMClaim) and pool-annotated ADDs,
 * DELs, pod deletions with and without DEL, claim deletions, pool deletions and the passing of
 * time, over three nodes, three namespaces and two networks whose pools overlap. Each ADD goes the
 * daemon's way: a CNI request resolved by {@link AddRequests}, served by the {@link Allocator}.
 * After every step the model checks: one holder per address per network, no address outside its
 * pool's network, the reuse delay held for every change of holder whatever the source, at most one
 * address per claim and pool, and no "exhausted" while the node could obtain an address.
 *
 * <p>The steps come from {@link AddressSteps}, the generator {@code AddressModelIT} runs against a
 * real control plane. Five seeds a run, printed; {@code -Dkipam.seed=N} repeats a run, {@code
 * -Dkipam.model.steps=N} sets the steps per seed (10,000 by default).
 */
class AddressModelTest {

  private static final int STEPS = Integer.getInteger("kipam.model.steps", 10_000);
  private static final List<String> NODES = List.of("node-a", "node-b", "node-c");
  private static final List<String> NAMESPACES = List.of("red-team", "blue-team", "green-team");

  /** Network configuration name → the pools' network it gives addresses of. */
  private static final Map<String, String> NETWORKS = Map.of("pods", "", "blue", "blue");

  @Test
  void everyWayToAnAddressKeepsTheInvariantsOverSeededRandomSequences() {
    long base = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    System.out.println(
        "AddressModelTest: seeds "
            + base
            + ".."
            + (base + 4)
            + " (-Dkipam.seed="
            + base
            + " repeats them), "
            + STEPS
            + " steps each");
    for (int i = 0; i < 5; i++) {
      World world = new World(base + i);
      world.run(STEPS);
      System.out.println("  seed " + (base + i) + ": " + world.summary());
    }
  }

  /** The cluster as the fakes hold it, and what the model remembers of it. */
  private static final class World implements AddressSteps.Actions {
    final long seed;
    final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
    final FakeStore store = new FakeStore();
    final FakeBlockStatus status = new FakeBlockStatus(store);
    final FakeClaimStore claims = new FakeClaimStore(store);
    final Map<String, PoolView> pools = new LinkedHashMap<>();
    final Set<String> deletedPools = new HashSet<>();
    final Map<String, Map<String, String>> namespaceAnnotations = new HashMap<>();
    final Map<String, Node> nodes = new LinkedHashMap<>();
    final Map<String, Pod> pods = new LinkedHashMap<>();
    final Map<String, ClaimStore.Claim> claimsByName = new LinkedHashMap<>();
    final Map<String, String> claimNameByUid = new HashMap<>();

    /** A claim deleted: its sub-claims go once they have rested, as kipam-operator gives them. */
    final List<PendingRelease> claimReleases = new ArrayList<>();

    /** (network, address) → who holds it now. */
    Map<String, String> holders = new HashMap<>();

    /** (network, address) → when it was last released, and by whom. */
    final Map<String, Released> released = new HashMap<>();

    final StepTrail trail = new StepTrail();
    int step;
    int podCount;

    record Released(Instant at, String holder, Duration delay) {}

    record PendingRelease(String blockName, Instant at) {}

    World(long seed) {
      this.seed = seed;
      pool("pods-a", "10.1.0.0/27", 29, 30, "");
      pool("pods-b", "10.1.0.32/28", 29, 10, "");
      pool("blue-a", "10.1.0.0/27", 29, 30, "blue");
      namespaceAnnotations.put("green-team", Map.of(ApiConstants.ANNOTATION_POOLS, "pods-b"));
      namespaceAnnotations.put(
          "blue-team", Map.of(ApiConstants.ANNOTATION_POOLS, "blue-a")); // another network's
      for (int i = 0; i < NODES.size(); i++) {
        nodes.put(NODES.get(i), new Node(NODES.get(i), seed * 31 + i));
      }
      for (String namespace : NAMESPACES) {
        for (int c = 0; c < 2; c++) {
          String name = "vm-" + c;
          ClaimStore.Claim claim = claims.add(namespace, name, "pods");
          claimsByName.put(namespace + "/" + name, claim);
          claimNameByUid.put(claim.uid(), namespace + "/" + name);
        }
      }
    }

    private void pool(String name, String cidr, int block, int reuse, String network) {
      pools.put(
          name,
          new PoolView(
                  name,
                  PoolLayout.builder().cidr(cidr).blockSize(block).build(),
                  Duration.ofSeconds(reuse),
                  0)
              .withNodes(NODES.size())
              .withNetwork(network));
    }

    /** One node: its ledger, allocator and request resolver. */
    final class Node {
      final String name;
      final Ledger ledger;
      final Allocator allocator;
      final AddRequests requests;

      Node(String name, long seed) {
        this.name = name;
        ledger = new Ledger(name, clock);
        ledger.markSynced();
        allocator =
            new Allocator(
                ledger, store, claims, status, new Random(seed), Allocator.DEFAULT_SETTLE_AFTER);
        requests = new AddRequests(new Directory(), this::owner, claims, name);
        status.watchedBy(ledger);
      }

      NodeWatch.Owner owner(String namespace, String name, Optional<String> uid)
          throws NodeWatch.PodNotOnNodeException {
        Pod pod = pods.get(namespace + "/" + name);
        if (pod == null || !pod.node.equals(this.name)) {
          throw new NodeWatch.PodNotOnNodeException("no pod " + namespace + "/" + name);
        }
        PodSummary summary = new PodSummary();
        summary.setMetadata(
            new ObjectMetaBuilder()
                .withNamespace(namespace)
                .withName(name)
                .withUid(pod.uid)
                .withAnnotations(pod.annotations)
                .build());
        return new NodeWatch.Owner(new PodRef(namespace, name, pod.uid), summary);
      }
    }

    /** The pools and namespaces as a node's watches show them; counts as kipam-operator's. */
    final class Directory extends MapPoolDirectory {
      Directory() {
        super(pools, namespaceAnnotations);
      }

      @Override
      public PoolView pool(String name, String namespace) throws NodeWatch.PoolNotUsableException {
        PoolView pool = pools.get(name);
        if (pool == null || deletedPools.contains(name)) {
          throw new NodeWatch.PoolNotUsableException("IPPool " + name + " is being deleted");
        }
        return pool.withAvailable(BigInteger.valueOf(available(pool)))
            .withCount(clock.instant(), null);
      }
    }

    /** A pod: where it runs, its annotations, its attachments' container ID. */
    static final class Pod {
      final String namespace;
      final String name;
      final String uid;
      final String node;
      final Map<String, String> annotations;

      Pod(String namespace, String name, String uid, String node, Map<String, String> annotations) {
        this.namespace = namespace;
        this.name = name;
        this.uid = uid;
        this.node = node;
        this.annotations = annotations;
      }

      String containerId() {
        return "c-" + uid;
      }
    }

    void run(int steps) {
      holders = holdersNow();
      AddressSteps generator = new AddressSteps(seed);
      for (step = 1; step <= steps; step++) {
        AddressSteps.apply(generator.next(), this);
        check();
      }
    }

    String summary() {
      return trail.outcomes().toString();
    }

    private void note(String what) {
      trail.note(step, what);
    }

    private void count(String outcome) {
      trail.count(outcome);
    }

    /** The step's pod: a new one, or one of the live pods. */
    private Pod pod(AddressSteps.Add add) {
      if (add.newPod() || pods.size() < 6) {
        int i = podCount++;
        String namespace = NAMESPACES.get(add.namespace());
        Map<String, String> annotations = new HashMap<>();
        switch (add.template()) {
          case OWN_NETWORK_POOL -> annotations.put(ApiConstants.ANNOTATION_POOLS, "pods-b");
          case BOTH_NETWORKS_POOLS ->
              annotations.put(ApiConstants.ANNOTATION_POOLS, "blue-a,pods-b");
          case OTHER_NETWORKS_POOL -> annotations.put(ApiConstants.ANNOTATION_IPV4_POOLS, "blue-a");
          case CLAIMED ->
              annotations.put(
                  NetworkSelection.ANNOTATION,
                  "[{\"name\":\"pods\",\"interface\":\"eth0\",\"ipam-claim-reference\":\"vm-"
                      + add.claim()
                      + "\"}]");
          case PLAIN -> {}
        }
        Pod pod = new Pod(namespace, "pod-" + i, "uid-" + i, NODES.get(add.node()), annotations);
        pods.put(namespace + "/" + pod.name, pod);
        return pod;
      }
      List<Pod> live = new ArrayList<>(pods.values());
      return live.get(AddressSteps.pick(add.pod(), live.size()));
    }

    private Map<String, String> env(String command, Pod pod, String ifName, String ip) {
      Map<String, String> env = new HashMap<>();
      env.put("CNI_COMMAND", command);
      env.put("CNI_CONTAINERID", pod.containerId());
      env.put("CNI_NETNS", "/var/run/netns/" + pod.uid);
      env.put("CNI_IFNAME", ifName);
      env.put(
          "CNI_ARGS",
          "K8S_POD_NAMESPACE="
              + pod.namespace
              + ";K8S_POD_NAME="
              + pod.name
              + ";K8S_POD_UID="
              + pod.uid
              + (ip == null ? "" : ";IP=" + ip));
      env.put("CNI_PATH", "/opt/cni/bin");
      return env;
    }

    private static byte[] config(String network) {
      String pools = network.equals("pods") ? "[\"pods-a\"]" : "[\"blue-a\"]";
      String json =
          "{\"cniVersion\":\"1.0.0\",\"name\":\""
              + network
              + "\",\"type\":\"bridge\",\"allowPersistentIPs\":true,"
              + "\"ipam\":{\"type\":\"kipam\",\"pools\":"
              + pools
              + "}}";
      return json.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void add(AddressSteps.Add add) {
      Pod pod = pod(add);
      String ifName = add.network().ifName();
      String network = add.network() == AddressSteps.Network.PRIMARY ? "pods" : "blue";
      String chosen = add.asksByName() ? "10.1.0." + AddressSteps.pick(add.chosen(), 64) : null;
      Node node = nodes.get(pod.node);
      String what =
          "ADD "
              + network
              + " "
              + ifName
              + " of "
              + pod.namespace
              + "/"
              + pod.name
              + " on "
              + pod.node
              + (chosen == null ? "" : " IP=" + chosen)
              + (pod.annotations.isEmpty() ? "" : " " + pod.annotations);
      AddRequest request;
      try {
        request =
            node.requests.resolve(
                CniRequest.parse(env("ADD", pod, ifName, chosen), config(network)));
      } catch (Refusal | CniException e) {
        note(what + " -> refused before allocation: " + e.getMessage());
        count("refused while resolving");
        return;
      } catch (NodeWatch.PoolNotUsableException | NodeWatch.PodNotOnNodeException e) {
        note(what + " -> " + e.getMessage());
        count("pool or pod not usable");
        return;
      }
      assertThat(request.poolNetwork()).as(seedAndStep()).isEqualTo(NETWORKS.get(network));
      try {
        List<Lease> leases = node.allocator.allocate(request);
        note(what + " -> " + leases.stream().map(l -> l.pool() + " " + l.ip()).toList());
        count("added " + request.families().get(0).intent().getClass().getSimpleName());
      } catch (Refusal e) {
        note(what + " -> " + e.kind() + ": " + e.getMessage());
        count("refused " + e.kind());
        if (e.kind() == Refusal.Kind.EXHAUSTED) {
          for (AddRequest.Family family : request.families()) {
            for (PoolView pool : family.pools()) {
              Optional<IpAddress> free = obtainable(node.name, pool);
              if (free.isPresent()) {
                fail(
                    seedAndStep()
                        + ": "
                        + what
                        + " was told the pool is exhausted ("
                        + e.getMessage()
                        + ") while node "
                        + node.name
                        + " could obtain "
                        + free.get()
                        + " of pool "
                        + pool.name()
                        + "\n"
                        + trail.recent());
              }
            }
          }
        }
      } catch (ClaimException e) {
        note(what + " -> claim " + e.kind() + ": " + e.getMessage());
        count("claim " + e.kind());
      } catch (StoreUnavailableException e) {
        note(what + " -> " + e.getMessage());
        count("store");
      }
    }

    @Override
    public void del(double which) {
      List<Lease> all = new ArrayList<>();
      nodes.values().forEach(n -> all.addAll(n.ledger.leases()));
      if (all.isEmpty()) {
        return;
      }
      all.sort(
          java.util.Comparator.comparing((Lease l) -> l.node())
              .thenComparing(Lease::pool)
              .thenComparing(Lease::ip));
      Lease lease = all.get(AddressSteps.pick(which, all.size()));
      Node node = nodes.get(lease.node());
      note(
          "DEL "
              + lease.attachment()
              + " of "
              + lease.pod().namespace()
              + "/"
              + lease.pod().name());
      node.allocator.release(
          List.of(lease.pool()),
          lease.attachment(),
          Optional.of(new Allocator.PodName(lease.pod().namespace(), lease.pod().name())));
      count("del");
    }

    /** A pod deleted: by kubelet after its DELs, or force-deleted and its IPAddresses collected. */
    @Override
    public void deletePod(double which, boolean forced) {
      if (pods.isEmpty()) {
        return;
      }
      List<Pod> live = new ArrayList<>(pods.values());
      Pod pod = live.get(AddressSteps.pick(which, live.size()));
      pods.remove(pod.namespace + "/" + pod.name);
      Node node = nodes.get(pod.node);
      note((forced ? "force-delete " : "delete ") + pod.namespace + "/" + pod.name);
      for (Lease lease : node.ledger.leases()) {
        if (!lease.pod().uid().equals(pod.uid)) {
          continue;
        }
        if (forced) {
          store.addresses.remove(lease.pod().namespace() + "/" + lease.name());
          node.allocator.endAttachment(lease);
        } else {
          node.allocator.release(List.of(lease.pool()), lease.attachment(), Optional.empty());
        }
      }
      count(forced ? "pod force-deleted" : "pod deleted");
    }

    /** A claim deleted once no pod has its address: its sub-claims go after resting. */
    @Override
    public void deleteClaim(double which) {
      List<String> names = new ArrayList<>(claimsByName.keySet());
      String key = names.get(AddressSteps.pick(which, names.size()));
      ClaimStore.Claim claim = claimsByName.get(key);
      boolean attached =
          store.addresses.values().stream()
              .anyMatch(
                  l -> l.claim() != null && (l.pod().namespace() + "/" + l.claim()).equals(key));
      if (attached) {
        return;
      }
      note("delete IPAMClaim " + key);
      claims.claims.remove(key);
      claims.labels.forEach(
          (block, label) -> {
            if (label.claimUid().equals(claim.uid())) {
              claimReleases.add(new PendingRelease(block, clock.instant()));
            }
          });
      ClaimStore.Claim again = claims.add(claim.namespace(), claim.name(), "pods");
      claimsByName.put(key, again);
      claimNameByUid.put(again.uid(), key);
      count("claim deleted");
    }

    @Override
    public void deletePool() {
      if (!deletedPools.remove("pods-b")) {
        deletedPools.add("pods-b");
        note("IPPool pods-b being deleted");
      } else {
        note("IPPool pods-b usable again");
      }
    }

    @Override
    public void pass(Duration time) {
      clock.advance(time);
      note("time passes " + time.toMillis() + " ms");
      claimReleases.removeIf(
          p -> {
            if (p.at().plus(Duration.ofSeconds(30)).isAfter(clock.instant())) {
              return false;
            }
            store.blocks.remove(p.blockName());
            claims.labels.remove(p.blockName());
            return true;
          });
      for (Node node : nodes.values()) {
        node.allocator.returnBlocks();
      }
    }

    private String seedAndStep() {
      return "seed " + seed + ", step " + step;
    }

    /** Who holds each (network, address) now: an IPAddress's holder, or a claim's sub-claim. */
    private Map<String, String> holdersNow() {
      Map<String, String> now = new HashMap<>();
      for (Lease lease : store.addresses.values()) {
        PoolView pool = pools.get(lease.pool());
        String expected = NETWORKS.get(lease.network());
        if (!pool.network().equals(expected)) {
          fail(
              seedAndStep()
                  + ": "
                  + lease.ip()
                  + " of pool "
                  + pool.name()
                  + " ("
                  + pool.networkName()
                  + ") given to an interface of network configuration "
                  + lease.network()
                  + "\n"
                  + trail.recent());
        }
        String holder =
            lease.claim() != null
                ? "claim " + lease.pod().namespace() + "/" + lease.claim()
                : "pod " + lease.pod().uid();
        String key = pool.network() + "|" + lease.ip();
        String previous = now.put(key, holder);
        if (previous != null && !previous.equals(holder)) {
          fail(twice(key, previous, holder));
        }
      }
      claims.labels.forEach(
          (block, label) -> {
            if (!store.blocks.containsKey(block)) {
              return;
            }
            String key = pools.get(label.pool()).network() + "|" + label.ip();
            String name = claimNameByUid.get(label.claimUid());
            // A deleted claim's sub-claim still takes the address while it rests.
            boolean current = claimsByName.get(name).uid().equals(label.claimUid());
            String holder = (current ? "claim " : "deleted claim ") + name;
            String previous = now.put(key, holder);
            if (previous != null && !previous.equals(holder)) {
              fail(twice(key, previous, holder));
            }
          });
      return now;
    }

    private String twice(String key, String one, String other) {
      return seedAndStep()
          + ": address "
          + key
          + " (network|address) held twice: by "
          + one
          + " and by "
          + other
          + "\n"
          + trail.recent();
    }

    private void check() {
      Map<String, String> now = holdersNow();
      for (var before : holders.entrySet()) {
        // A deleted claim's release counts from its deletion, when its holder changed.
        if (!before.getValue().equals(now.get(before.getKey()))
            && !before.getValue().startsWith("deleted claim ")) {
          released.put(
              before.getKey(),
              new Released(clock.instant(), before.getValue(), delayOf(before.getKey())));
        }
      }
      for (var after : now.entrySet()) {
        String previous = holders.get(after.getKey());
        if (after.getValue().equals(previous) || after.getValue().startsWith("deleted claim ")) {
          continue;
        }
        Released last = released.get(after.getKey());
        if (last != null
            && !last.holder().equals(after.getValue())
            && last.at().plus(last.delay()).isAfter(clock.instant())) {
          fail(
              seedAndStep()
                  + ": "
                  + after.getKey()
                  + " went to "
                  + after.getValue()
                  + " "
                  + Duration.between(last.at(), clock.instant()).toMillis()
                  + " ms after "
                  + last.holder()
                  + " released it (reuse delay "
                  + last.delay().toSeconds()
                  + " s)\n"
                  + trail.recent());
        }
      }
      Map<String, Set<IpAddress>> perClaim = new HashMap<>();
      for (Lease lease : store.addresses.values()) {
        if (lease.claim() != null) {
          perClaim
              .computeIfAbsent(
                  claimsByName.get(lease.pod().namespace() + "/" + lease.claim()).uid()
                      + " in "
                      + lease.pool(),
                  k -> new HashSet<>())
              .add(lease.ip());
        }
      }
      claims.labels.forEach(
          (block, label) -> {
            if (store.blocks.containsKey(block)) {
              perClaim
                  .computeIfAbsent(label.claimUid() + " in " + label.pool(), k -> new HashSet<>())
                  .add(label.ip());
            }
          });
      perClaim.forEach(
          (claim, ips) ->
              assertThat(ips)
                  .as(seedAndStep() + ": IPAMClaim (UID) " + claim + "\n" + trail.recent())
                  .hasSizeLessThanOrEqualTo(1));
      for (Node node : nodes.values()) {
        assertThat(node.ledger.sizes().get("reserved"))
            .as(seedAndStep() + ": nothing left reserved on " + node.name)
            .isZero();
      }
      holders = now;
    }

    private Duration delayOf(String key) {
      String network = key.substring(0, key.indexOf('|'));
      IpAddress ip = IpAddress.parse(key.substring(key.indexOf('|') + 1));
      return pools.values().stream()
          .filter(p -> p.network().equals(network) && p.layout().cidr().contains(ip))
          .map(PoolView::reuseDelay)
          .findFirst()
          .orElse(Duration.ZERO);
    }

    /** What kipam-operator would count free in {@code pool}: neither held nor resting. */
    private long available(PoolView pool) {
      Map<String, String> held = holdersNow();
      long n = 0;
      for (Cidr block : pool.layout().usableBlocks()) {
        for (IpAddress ip : pool.layout().assignable(block)) {
          if (free(held, pool, ip)) {
            n++;
          }
        }
      }
      return n;
    }

    private boolean free(Map<String, String> held, PoolView pool, IpAddress ip) {
      String key = pool.network() + "|" + ip;
      if (held.containsKey(key)) {
        return false;
      }
      Released last = released.get(key);
      return last == null || !last.at().plus(last.delay()).isAfter(clock.instant());
    }

    /**
     * An address of {@code pool} that {@code node} could obtain now: free, not resting, in a slot
     * nobody holds, in one of its own Exclusive slots, or in a Shared slot.
     */
    private Optional<IpAddress> obtainable(String node, PoolView pool) {
      Map<String, String> held = holdersNow();
      for (Cidr slot : pool.layout().usableBlocks()) {
        FakeStore.Block block = store.blocks.get(ResourceNames.blockName(pool.name(), slot));
        boolean reachable =
            block == null
                || node.equals(block.node()) && !block.shared()
                || block.node() == null
                || block.shared();
        if (!reachable || (block != null && block.deleting())) {
          continue;
        }
        for (IpAddress ip : pool.layout().assignable(slot)) {
          if (free(held, pool, ip)
              && !store.blocks.containsKey(ResourceNames.subClaimName(pool.name(), ip))) {
            return Optional.of(ip);
          }
        }
      }
      return Optional.empty();
    }
  }
}
