package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.SlotModes;
import io.kipam.operator.cli.KubectlKipam;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.system.harness.Whereabouts;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.SwitchOverHold;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * issue 41: moving from whereabouts without renumbering a pod. The real whereabouts plugin (v0.9.4,
 * built from its Go module) allocates for pods on 4 nodes in 3 namespaces on two networks, {@code
 * red} (10.173.0.0/22, an exclude, no network_name) and {@code blue} (10.173.0.0/23, an overlapping
 * range kept apart by its network_name); some pods are then deleted, so whereabouts keeps leaked
 * allocations. {@code kubectl kipam import whereabouts} runs as a dry run, for real, and again; the
 * NADs are switched to kipam and kipam-node daemons (one per node, kipam-operator running) hand out
 * addresses to as many new pods. Seeded ({@code -Dkipam.seed=N}): each pod's namespace, node and
 * network.
 */
class WhereaboutsImportIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final int PODS = Integer.getInteger("kipam.import.pods", 200);
  private static final int LEAKED = 10;
  private static final int NODES = 4;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client = ControlPlane.shared().client();
  private final SeededRandom random = new SeededRandom();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("wbimport");
  private List<NodeRig> rigs;

  /** Whereabouts installed, and the nodes started on a boot pool of their own. */
  private Whereabouts nodesBesideWhereabouts(String bootCidr) throws Exception {
    Whereabouts whereabouts =
        Whereabouts.install(client, ControlPlane.shared().adminKubeconfig(), processes.dir);
    String boot = Cluster.readiedPool(client, "boot", Cluster.spec(bootCidr, 28, 0));
    rigs = processes.nodes(boot, NODES, Map.of());
    return whereabouts;
  }

  /** A pod with one attachment on one network, and the address it got. */
  private record Attached(Pod pod, String network, String ip) {
    String ref() {
      return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }
  }

  @Test
  void whereaboutsAllocationsAreTakenOverWithoutRenumberingAPod() throws Exception {
    random.print("WhereaboutsImportIT");
    Whereabouts whereabouts = nodesBesideWhereabouts("10.174.0.0/24");
    List<String> namespaces = processes.namespaces;
    String blueName = Fixtures.uniqueName("blue");
    Map<String, String> nads =
        Map.of(
            "red",
                nad(
                    namespaces.get(0),
                    "red",
                    wbIpam(whereabouts, "10.173.0.0/22", "\"exclude\":[\"10.173.3.240/28\"]")),
            "blue",
                nad(
                    namespaces.get(1),
                    "blue",
                    wbIpam(whereabouts, "10.173.0.0/23", "\"network_name\":\"" + blueName + "\"")));

    // whereabouts allocates for PODS live pods and LEAKED pods that are then deleted.
    long started = System.nanoTime();
    List<Attached> viaWhereabouts =
        attach(
            PODS + LEAKED,
            namespaces,
            "wb",
            (pod, network) -> {
              CniCall.Outcome added =
                  whereabouts.call(
                      "ADD",
                      pod,
                      "c-" + pod.getMetadata().getUid(),
                      "net1",
                      nadConfig(network, nads));
              assertThat(added.ok()).as(added.stdout()).isTrue();
              return added.ip();
            });
    System.out.printf(
        "whereabouts: %d pods attached in %.1f s%n",
        viaWhereabouts.size(), (System.nanoTime() - started) / 1e9);
    List<Attached> leaked = viaWhereabouts.subList(PODS, PODS + LEAKED);
    List<Attached> imported = new ArrayList<>(viaWhereabouts.subList(0, PODS));
    for (Attached gone : leaked) {
      client.resource(gone.pod()).withGracePeriod(0).delete();
    }
    await().until(() -> leaked.stream().allMatch(a -> client.resource(a.pod()).get() == null));
    assertNoAddressTwice(viaWhereabouts, "whereabouts' own allocations");

    // The dry run prints the plan and writes nothing.
    long before = kipamObjects();
    Run dry = kubectlKipam("import", "whereabouts", "--dry-run", "-n", whereabouts.namespace);
    System.out.println("dry run: " + dry.summary());
    assertThat(dry.code()).as(dry.out() + dry.err()).isZero();
    assertThat(dry.out())
        .contains("2 pools")
        .contains(PODS + " addresses, " + LEAKED + " leaked, 0 problems")
        .contains("dry run: nothing was written");
    assertThat(kipamObjects()).as("kipam objects after the dry run").isEqualTo(before);

    // The real run writes it; the pools come out Ready.
    Run real = kubectlKipam("import", "whereabouts", "-n", whereabouts.namespace);
    System.out.println("import: " + real.summary());
    assertThat(real.code()).as(real.out() + real.err()).isZero();
    assertThat(real.out()).contains("0 conflicts");
    String redPool = "wb-10-173-0-0-22";
    String bluePool = "wb-" + blueName + "-10-173-0-0-23";
    Map<String, String> poolOf = Map.of("red", redPool, "blue", bluePool);
    for (String pool : poolOf.values()) {
      Cluster.awaitReady(client, pool);
    }
    assertThat(client.resources(IPPool.class).withName(bluePool).get().getSpec().getNetwork())
        .isEqualTo(blueName);
    for (Attached a : imported) {
      IPAddress address = addressOf(poolOf.get(a.network()), a);
      assertThat(address).as("the IPAddress of " + a.ref()).isNotNull();
      assertThat(address.getSpec().getIp()).isEqualTo(a.ip());
      assertThat(address.getSpec().getNode()).isEqualTo(a.pod().getSpec().getNodeName());
      assertThat(address.getMetadata().getOwnerReferences().get(0).getUid())
          .isEqualTo(a.pod().getMetadata().getUid());
    }
    for (Attached a : leaked) {
      assertThat(dry.out()).contains(a.ip());
      assertThat(addressOf(poolOf.get(a.network()), a)).as("leaked " + a.ref()).isNull();
    }
    printSlots(poolOf.values());

    // Once more: nothing changes.
    long afterImport = kipamObjects();
    Run again = kubectlKipam("import", "whereabouts", "-n", whereabouts.namespace);
    System.out.println("import again: " + again.summary());
    assertThat(again.code()).as(again.out() + again.err()).isZero();
    assertThat(again.out()).contains("; 0 objects to create").contains("written: 0 created");
    assertThat(kipamObjects()).isEqualTo(afterImport);

    // Switch every NAD to kipam; as many new pods get their addresses from kipam-node.
    for (var nad : nads.entrySet()) {
      switchToKipam(nad.getValue(), nad.getKey(), poolOf.get(nad.getKey()));
    }
    Map<String, NodeRig> byNode = new HashMap<>();
    rigs.forEach(r -> byNode.put(r.node, r));
    started = System.nanoTime();
    List<Attached> viaKipam =
        attach(
            PODS,
            namespaces,
            "kp",
            (pod, network) -> {
              NodeRig rig = byNode.get(pod.getSpec().getNodeName());
              String config = kipamConfig(nads.get(network), rig);
              CniCall.Outcome added =
                  CniCall.whileTryAgain(
                      () ->
                          CniCall.run(
                              rig.kipam,
                              CniCall.env("ADD", "k-" + pod.getMetadata().getUid(), "net1", pod),
                              config),
                      Duration.ofSeconds(60));
              assertThat(added.ok()).as(added.stdout()).isTrue();
              return added.ip();
            });
    System.out.printf(
        "kipam: %d new pods attached in %.1f s%n",
        viaKipam.size(), (System.nanoTime() - started) / 1e9);
    for (String network : poolOf.keySet()) {
      Set<String> old = ips(imported, network);
      Set<String> fresh = ips(viaKipam, network);
      assertThat(fresh).as("new addresses of " + network).doesNotContainAnyElementsOf(old);
      System.out.printf(
          "%s: %d imported, %d new from kipam, none in common%n",
          network, old.size(), fresh.size());
    }
    List<Attached> all = new ArrayList<>(imported);
    all.addAll(viaKipam);
    assertNoAddressTwice(all, "imported and new");
    for (String pool : poolOf.values()) {
      Map<String, Long> held =
          Cluster.addresses(client, pool).stream()
              .collect(Collectors.groupingBy(a -> a.getSpec().getIp(), Collectors.counting()));
      assertThat(held.values()).as("IPAddresses of " + pool + " per IP").allMatch(n -> n == 1);
    }

    // Deleting imported pods frees their addresses through the garbage collector.
    List<Attached> deleted = imported.subList(0, 20);
    started = System.nanoTime();
    for (Attached a : deleted) {
      client.resource(a.pod()).withGracePeriod(0).delete();
    }
    await("the IPAddresses of deleted imported pods are gone")
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              for (Attached a : deleted) {
                assertThat(addressOf(poolOf.get(a.network()), a)).as(a.ref()).isNull();
              }
            });
    System.out.printf(
        "%d imported pods deleted: their IPAddresses gone in %.1f s%n",
        deleted.size(), (System.nanoTime() - started) / 1e9);
  }

  /**
   * Acceptance 4: the documented switch-over while pods of the network are started all along by 4
   * starters (as controllers would), each ADD through what the NetworkAttachmentDefinition says at
   * that moment (whereabouts, then kipam). The hold is a ValidatingAdmissionPolicy refusing new
   * pods in the network's namespaces; the starters retry refused creates.
   */
  @Test
  void theSwitchOverWhilePodsAreStartedThroughoutNeverGivesAnAddressTwice() throws Exception {
    random.print("WhereaboutsImportIT switch-over");
    Whereabouts whereabouts = nodesBesideWhereabouts("10.174.1.0/24");
    List<String> namespaces = processes.namespaces;
    String nad =
        nad(
            namespaces.get(0),
            "green",
            wbIpam(whereabouts, "10.175.0.0/23", "\"range_start\":\"10.175.0.10\""));
    String pool = "wb-10-175-0-0-23";
    Map<String, NodeRig> byNode = new HashMap<>();
    rigs.forEach(r -> byNode.put(r.node, r));
    String hold = Fixtures.uniqueName("hold");
    for (String namespace : namespaces) {
      Fixtures.label(client.namespaces().withName(namespace), SwitchOverHold.LABEL, hold);
    }

    List<Attached> attached = java.util.Collections.synchronizedList(new ArrayList<>());
    java.util.concurrent.atomic.AtomicInteger inFlight =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger refused =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicInteger next =
        new java.util.concurrent.atomic.AtomicInteger();
    ExecutorService starters = Executors.newFixedThreadPool(4);
    List<Future<?>> running = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Random own = new Random(random.seed() + t);
      running.add(
          starters.submit(
              () -> {
                while (!stop.get()) {
                  String namespace = namespaces.get(own.nextInt(namespaces.size()));
                  NodeRig rig = rigs.get(own.nextInt(rigs.size()));
                  String name = "sw-" + next.incrementAndGet();
                  // In flight from before the create until the ADD is over: once the hold
                  // refuses creates and nothing is in flight, no ADD of the network is under way.
                  inFlight.incrementAndGet();
                  Pod pod;
                  try {
                    pod = Cluster.pod(client, namespace, name, rig.node);
                  } catch (io.fabric8.kubernetes.client.KubernetesClientException held) {
                    refused.incrementAndGet();
                    inFlight.decrementAndGet();
                    Thread.sleep(100); // a controller's back-off
                    continue;
                  }
                  try {
                    String config = nadConfig("green", Map.of("green", nad));
                    CniCall.Outcome added;
                    String via;
                    if (config.contains("\"whereabouts\"")) {
                      via = "whereabouts";
                      added =
                          whereabouts.call(
                              "ADD", pod, "c-" + pod.getMetadata().getUid(), "net1", config);
                    } else {
                      via = "kipam";
                      String withSocket = kipamConfig(nad, rig);
                      added =
                          CniCall.whileTryAgain(
                              () ->
                                  CniCall.run(
                                      rig.kipam,
                                      CniCall.env(
                                          "ADD",
                                          "k-" + pod.getMetadata().getUid(),
                                          "net1",
                                          namespace,
                                          name,
                                          pod.getMetadata().getUid()),
                                      withSocket),
                              Duration.ofSeconds(60));
                    }
                    assertThat(added.ok()).as(via + " " + added.stdout()).isTrue();
                    attached.add(new Attached(pod, via, added.ip()));
                  } finally {
                    inFlight.decrementAndGet();
                  }
                }
                return null;
              }));
    }
    try {
      await().atMost(Duration.ofSeconds(120)).until(() -> attached.size() >= 100);

      // 2. Hold: new pods of the network are refused; wait for the ADDs under way.
      long holdStarted = System.nanoTime();
      HasMetadata[] policy = SwitchOverHold.create(client, hold).toArray(HasMetadata[]::new);
      await("the hold refuses new pods")
          .atMost(Duration.ofSeconds(30))
          .until(() -> refused.get() > 0 && inFlight.get() == 0);
      int beforeImport = attached.size();
      // 3. Import, 4. switch, 5. import again.
      Run first = kubectlKipam("import", "whereabouts", "-n", whereabouts.namespace);
      System.out.println("import: " + first.summary());
      assertThat(first.code()).as(first.out() + first.err()).isZero();
      Cluster.awaitReady(client, pool);
      switchToKipam(nad, "green", pool);
      Run second = kubectlKipam("import", "whereabouts", "-n", whereabouts.namespace);
      System.out.println("import after the switch: " + second.summary());
      assertThat(second.code()).as(second.out() + second.err()).isZero();
      assertThat(second.out()).contains("; 0 objects to create");
      // 6. Release the hold.
      for (HasMetadata object : policy) {
        client.resource(object).delete();
      }
      double held = (System.nanoTime() - holdStarted) / 1e9;
      System.out.printf(
          "hold: %.1f s (%d pod creates refused meanwhile); %d pods attached before it%n",
          held, refused.get(), beforeImport);
      await().atMost(Duration.ofSeconds(120)).until(() -> attached.size() >= beforeImport + 100);
    } finally {
      stop.set(true);
      starters.shutdown();
    }
    for (Future<?> f : running) {
      f.get();
    }
    Map<String, Long> byVia =
        attached.stream().collect(Collectors.groupingBy(Attached::network, Collectors.counting()));
    System.out.println("switch-over: pods attached " + byVia);
    assertThat(byVia.keySet()).containsExactlyInAnyOrder("whereabouts", "kipam");
    Set<String> seen = new HashSet<>();
    for (Attached a : attached) {
      assertThat(seen.add(a.ip())).as(a.ip() + " held twice (" + a.ref() + ")").isTrue();
    }
    Map<String, Long> held =
        Cluster.addresses(client, pool).stream()
            .collect(Collectors.groupingBy(a -> a.getSpec().getIp(), Collectors.counting()));
    assertThat(held.values()).allMatch(n -> n == 1);
    assertThat(held).hasSize(attached.size());
    System.out.printf(
        "switch-over: %d pods, %d distinct addresses, none twice%n", attached.size(), seen.size());
  }

  private interface Attach {
    String add(Pod pod, String network) throws Exception;
  }

  /** {@code count} pods, each in a random namespace, on a random node, on a random network. */
  private List<Attached> attach(int count, List<String> namespaces, String prefix, Attach attach)
      throws Exception {
    List<Pod> pods = new ArrayList<>();
    List<String> networks = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String namespace = namespaces.get(random.nextInt(namespaces.size()));
      String node = rigs.get(random.nextInt(rigs.size())).node;
      pods.add(Cluster.pod(client, namespace, prefix + "-" + i, node));
      networks.add(random.nextBoolean() ? "red" : "blue");
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      Map<Integer, Future<String>> ips = new ConcurrentHashMap<>();
      for (int i = 0; i < count; i++) {
        int n = i;
        ips.put(n, pool.submit(() -> attach.add(pods.get(n), networks.get(n))));
      }
      List<Attached> out = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        out.add(new Attached(pods.get(i), networks.get(i), ips.get(i).get()));
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  private static String wbIpam(Whereabouts whereabouts, String range, String extra) {
    return "{\"type\":\"whereabouts\",\"range\":\""
        + range
        + "\","
        + extra
        + ",\"configuration_path\":\""
        + whereabouts.settings
        + "\"}";
  }

  /** Creates a NetworkAttachmentDefinition named {@code name}; its namespace/name. */
  private String nad(String namespace, String name, String ipam) {
    String config =
        "{\"cniVersion\":\"1.0.0\",\"name\":\""
            + name
            + "\",\"type\":\"macvlan\",\"ipam\":"
            + ipam
            + "}";
    Whereabouts.createNad(client, namespace, name, config);
    return namespace + "/" + name;
  }

  private GenericKubernetesResource readNad(String ref) {
    String[] nr = ref.split("/");
    return client
        .genericKubernetesResources("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
        .inNamespace(nr[0])
        .withName(nr[1])
        .get();
  }

  /** The CNI configuration a runtime reads from the NAD (as Multus does, at each ADD). */
  @SuppressWarnings("unchecked")
  private String nadConfig(String network, Map<String, String> nads) {
    return (String)
        ((Map<String, Object>) readNad(nads.get(network)).getAdditionalProperties().get("spec"))
            .get("config");
  }

  /** The switch of docs/migration.md: the NAD's ipam becomes kipam's, naming the imported pool. */
  @SuppressWarnings("unchecked")
  private void switchToKipam(String ref, String name, String pool) throws Exception {
    GenericKubernetesResource nad = readNad(ref);
    Map<String, Object> spec = (Map<String, Object>) nad.getAdditionalProperties().get("spec");
    ObjectNode config = (ObjectNode) JSON.readTree((String) spec.get("config"));
    config.set("ipam", JSON.readTree("{\"type\":\"kipam\",\"pools\":[\"" + pool + "\"]}"));
    spec.put("config", JSON.writeValueAsString(config));
    client.resource(nad).update();
  }

  /** The NAD's kipam configuration with this node's socket (each test node has its own). */
  private String kipamConfig(String ref, NodeRig rig) throws Exception {
    @SuppressWarnings("unchecked")
    String text =
        (String)
            ((Map<String, Object>) readNad(ref).getAdditionalProperties().get("spec"))
                .get("config");
    ObjectNode config = (ObjectNode) JSON.readTree(text);
    assertThat(config.path("ipam").path("type").asText()).isEqualTo("kipam");
    ((ObjectNode) config.get("ipam")).put("socket", rig.daemon.socket.toString());
    return JSON.writeValueAsString(config);
  }

  private IPAddress addressOf(String pool, Attached a) {
    return client
        .resources(IPAddress.class)
        .inNamespace(a.pod().getMetadata().getNamespace())
        .withName(
            io.kipam.api.net.ResourceNames.addressName(
                pool, io.kipam.api.net.IpAddress.parse(a.ip())))
        .get();
  }

  private void printSlots(java.util.Collection<String> pools) {
    for (String pool : pools) {
      List<IPBlock> blocks = Cluster.blocks(client, pool);
      long subClaims = blocks.stream().filter(SlotModes::subClaim).count();
      long shared =
          blocks.stream().filter(b -> !SlotModes.subClaim(b) && SlotModes.shared(b)).count();
      System.out.printf(
          "%s: %d slots (%d Exclusive, %d Shared), %d sub-claims%n",
          pool, blocks.size() - subClaims, blocks.size() - subClaims - shared, shared, subClaims);
    }
  }

  private long kipamObjects() {
    return client.resources(IPPool.class).list().getItems().size()
        + client.resources(IPBlock.class).list().getItems().size()
        + client.resources(IPAddress.class).inAnyNamespace().list().getItems().size();
  }

  private static Set<String> ips(List<Attached> attached, String network) {
    return attached.stream()
        .filter(a -> a.network().equals(network))
        .map(Attached::ip)
        .collect(Collectors.toSet());
  }

  private static void assertNoAddressTwice(List<Attached> attached, String what) {
    for (String network : List.of("red", "blue")) {
      Set<String> seen = new HashSet<>();
      for (Attached a : attached) {
        if (a.network().equals(network)) {
          assertThat(seen.add(a.ip())).as(what + ": " + a.ip() + " twice on " + network).isTrue();
        }
      }
    }
  }

  private record Run(int code, String out, String err) {
    String summary() {
      return out.lines()
              .filter(
                  l ->
                      l.contains(" pools, ") || l.startsWith("written:") || l.startsWith("dry run"))
              .collect(Collectors.joining(" | "))
          + " (exit "
          + code
          + ")";
    }
  }

  private Run kubectlKipam(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--kubeconfig");
    all.add(ControlPlane.shared().adminKubeconfig().toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        KubectlKipam.run(
            all,
            Map.of(),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
