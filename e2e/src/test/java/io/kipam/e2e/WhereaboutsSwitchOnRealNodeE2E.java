package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.RealNode;
import io.kipam.testing.SwitchOverHold;
import io.kipam.testing.Variants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The switch-over from whereabouts to kipam on a real node (kubelet, containerd, runc, Multus's
 * thin plugin): whereabouts v0.9.4, built from its Go module, serves a secondary network whose
 * NetworkAttachmentDefinition (one per namespace, same configuration {@code name}) gives Deployment
 * pods {@code net1}. While the Deployments scale up and down all along (the ReplicaSet controller
 * retrying the creates the hold refuses), the steps of docs/migration.md are followed: hold, {@code
 * kubectl kipam import whereabouts} run as a user runs it, switch each definition's {@code ipam} to
 * kipam naming the imported pool, import again, release. A sampler reads both IPAMs' records every
 * 250 ms and fails the test when one address is held by two live pods; at the end no pod has
 * changed its {@code net1} address and the pods started after the switch have theirs from kipam.
 * The scaling is drawn from the run's seed, printed. The range is data: nothing is sent outside the
 * node's network namespace.
 */
class WhereaboutsSwitchOnRealNodeE2E {

  static final String CLUSTER_NETWORK = "switch-default";
  static final String PRIMARY_POOL = "switch-pods";
  static final String NETWORK = "wb-net";
  static final String RANGE = "10.80.0.0/24";

  /** The kipam pool the import makes of whereabouts' IPPool {@code 10.80.0.0-24}. */
  static final String IMPORTED_POOL = "wb-10-80-0-0-24";

  static final List<String> NAMESPACES = List.of("switch-a", "switch-b");
  static final String HOLD_LABEL = SwitchOverHold.LABEL;
  static final String HOLD = "wb-switch";
  private static final Duration PODS_TIMEOUT = Duration.ofMinutes(4);
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final Random random = new Random(Variants.SEED);
  private static long begin;
  private static RealNode node;
  private static KipamOnRealNode kipam;
  private static WhereaboutsOnRealNode whereabouts;
  private static KubernetesClient client;

  @BeforeAll
  static void installMultusWhereaboutsAndKipam() {
    begin = System.nanoTime();
    System.out.printf(
        "scaling drawn from seed %d (-Dkipam.seed=%d repeats it)%n", Variants.SEED, Variants.SEED);
    node = RealNode.start();
    client = node.client();
    node.installMultus(CLUSTER_NETWORK);
    whereabouts = WhereaboutsOnRealNode.install(node, "whereabouts");
    kipam =
        KipamOnRealNode.install(
            node, KipamOnRealNode.bridgeWithoutGateway(CLUSTER_NETWORK, PRIMARY_POOL));
    kipam.awaitReady();
    client.resource(MultusOnRealNodeE2E.pool(PRIMARY_POOL, "10.252.0.0/24", null)).create();
    for (String ns : NAMESPACES) {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder()
                  .withNewMetadata()
                  .withName(ns)
                  .addToLabels(HOLD_LABEL, HOLD)
                  .endMetadata()
                  .build())
          .create();
      client.resource(attachmentDefinition(ns)).create();
    }
    System.out.printf(
        "Multus, whereabouts, kipam and the network in place %.1f s after the node began%n",
        seconds(begin));
  }

  @AfterAll
  static void stopNode() {
    KipamOnRealNode.closeAfterWorkloads(node, kipam, NAMESPACES);
    System.out.printf("whereabouts switch-over real-node tier: %.1f s in all%n", seconds(begin));
  }

  /** The network's NetworkAttachmentDefinition in {@code namespace}: a bridge with whereabouts. */
  static GenericKubernetesResource attachmentDefinition(String namespace) {
    String config =
        """
        {
          "cniVersion": "1.0.0",
          "name": "%s",
          "plugins": [{"type": "bridge", "bridge": "wb-br1", "ipam": %s}]
        }
        """
            .formatted(NETWORK, whereabouts.ipam(RANGE));
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("k8s.cni.cncf.io/v1")
        .withKind("NetworkAttachmentDefinition")
        .withNewMetadata()
        .withName(NETWORK)
        .withNamespace(namespace)
        .endMetadata()
        .addToAdditionalProperties("spec", Map.of("config", config))
        .build();
  }

  @Test
  void theSwitchOverWithLivePodsRenumbersNoneAndNeverHoldsAnAddressTwice() throws Exception {
    for (String ns : NAMESPACES) {
      client.resource(deployment(ns, 4)).create();
    }
    awaitSettled();
    Map<String, String> before = net1ByUid(livePods());
    Map<String, String> allocated = whereabouts.allocations();
    assertThat(allocated.keySet())
        .as("whereabouts' allocations")
        .containsAll(new HashSet<>(before.values()));
    System.out.printf(
        "whereabouts serves %d pods on net1: %s%n", before.size(), new TreeSet<>(before.values()));

    Sampler sampler = new Sampler();
    Scaler scaler = new Scaler();
    Thread sampling = new Thread(sampler, "sampler");
    Thread scaling = new Thread(scaler, "scaler");
    sampling.start();
    scaling.start();
    long switchStarted = System.nanoTime();
    Set<String> beforeRelease;
    String firstImport;
    String secondImport;
    try {
      // Pods come and go under whereabouts for a while (it reuses what DELs free).
      await("scaling under whereabouts")
          .atMost(Duration.ofMinutes(1))
          .until(() -> scaler.scalings.get() >= 4);
      // 2. Hold: the network's new pods are refused; wait until no ADD is under way.
      List<HasMetadata> hold = SwitchOverHold.create(client, HOLD);
      await("the hold refuses new pods")
          .atMost(Duration.ofMinutes(1))
          .until(() -> NAMESPACES.stream().allMatch(WhereaboutsSwitchOnRealNodeE2E::refused));
      await("no pod of the network in ContainerCreating")
          .atMost(PODS_TIMEOUT)
          .until(() -> testPods().stream().noneMatch(p -> "Pending".equals(phase(p))));
      // 3. Import; the pool comes out Ready.
      Run first = kubectlKipam("import", "whereabouts", "-n", whereabouts.namespace);
      firstImport = first.summary();
      System.out.println("import: " + firstImport);
      assertThat(first.code()).as(first.out() + first.err()).isZero();
      assertThat(first.out()).contains("0 conflicts");
      await("the imported pool Ready").atMost(Duration.ofMinutes(1)).until(() -> poolReady());
      // 4. Switch each definition, keeping the configuration's name.
      for (String ns : NAMESPACES) {
        switchToKipam(ns);
      }
      // 5. Import again: with the hold in place, nothing to create.
      Run second = kubectlKipam("import", "whereabouts", "-n", whereabouts.namespace);
      secondImport = second.summary();
      System.out.println("import after the switch: " + secondImport);
      System.out.print(second.out());
      assertThat(second.code()).as(second.out() + second.err()).isZero();
      assertThat(second.out()).contains("; 0 objects to create");
      // 6. Release.
      beforeRelease = uids(testPods());
      for (HasMetadata object : hold) {
        client.resource(object).delete();
      }
      System.out.printf(
          "hold: %.1f s, %d pods of the network meanwhile%n",
          seconds(switchStarted), beforeRelease.size());
      int scaledBeforeRelease = scaler.scalings.get();
      await("pods started after the release Running, while the scaling goes on")
          .atMost(PODS_TIMEOUT)
          .until(
              () ->
                  scaler.scalings.get() >= scaledBeforeRelease + 4
                      && livePods().stream()
                              .filter(p -> !beforeRelease.contains(p.getMetadata().getUid()))
                              .filter(p -> "Running".equals(phase(p)))
                              .count()
                          >= 6);
    } finally {
      scaler.stop.set(true);
      scaling.join(TimeUnit.MINUTES.toMillis(1));
    }
    // More pods than ever, then every pod settled.
    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("workload").scale(8);
    }
    awaitSettled();
    sampler.stop.set(true);
    sampling.join(TimeUnit.MINUTES.toMillis(1));

    assertThat(sampler.errors).as("API errors of the sampler").isEmpty();
    assertThat(scaler.errors).as("API errors of the scaler").isEmpty();
    assertThat(sampler.twice).as("addresses held by two live pods at a sample").isEmpty();
    assertThat(sampler.renumbered).as("pods whose net1 address changed").isEmpty();

    List<Pod> after = livePods();
    Map<String, String> net1 = net1ByUid(after);
    Map<String, IPAddress> kipamByUid = importedPoolAddressesByUid();
    int kept = 0;
    int fromKipam = 0;
    for (Pod pod : after) {
      String uid = pod.getMetadata().getUid();
      String ip = net1.get(uid);
      assertThat(node.addressesInPod(pod))
          .as("addresses inside %s", MultusOnRealNodeE2E.name(pod))
          .containsPattern("net1\\s+inet " + ip.replace(".", "\\.") + "/24");
      IPAddress address = kipamByUid.get(uid);
      assertThat(address)
          .as("the IPAddress of %s's net1 in %s", MultusOnRealNodeE2E.name(pod), IMPORTED_POOL)
          .isNotNull();
      assertThat(address.getSpec().getIp()).isEqualTo(ip);
      assertThat(address.getMetadata().getNamespace()).isEqualTo(pod.getMetadata().getNamespace());
      assertThat(address.getSpec().getNetwork()).isEqualTo(NETWORK);
      if (before.containsKey(uid)) {
        assertThat(ip)
            .as("net1 of %s, running before the switch", MultusOnRealNodeE2E.name(pod))
            .isEqualTo(before.get(uid));
        kept++;
      }
      if (!beforeRelease.contains(uid)) {
        fromKipam++;
      }
    }
    assertThat(fromKipam).as("pods started after the release").isPositive();
    // What the imports wrote for pods that have gone since goes with them.
    Set<String> liveUids = uids(livePods());
    await("no IPAddress of the imported pool held for a pod that is gone")
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                assertThat(importedPoolAddressesByUid().keySet())
                    .as("pod UIDs of the IPAddresses of %s", IMPORTED_POOL)
                    .containsExactlyInAnyOrderElementsOf(liveUids));
    assertThat(new HashSet<>(net1.values())).as("net1 addresses").hasSize(net1.size());

    System.out.printf(
        "pods: %d before the switch, %d seen Running by the sampler, %d at the end (%d of them from before the"
            + " switch with their address, %d started after the release with an address from"
            + " kipam)%n",
        before.size(), sampler.seen.size(), after.size(), kept, fromKipam);
    System.out.printf(
        "creates the hold refused (the ReplicaSet controller's FailedCreate events): %d%n",
        refusedCreates());
    System.out.printf(
        "sampler: %d samples, %d API errors, at most %d addresses held at once across both IPAMs,"
            + " none by two live pods; scaler: %d scalings%n",
        sampler.samples.get(),
        sampler.errors.size(),
        sampler.mostHeld.get(),
        scaler.scalings.get());
    System.out.printf(
        "switch-over %.1f s in all; import: %s; again: %s%n",
        seconds(switchStarted), firstImport, secondImport);
  }

  /** Reads both IPAMs' records every 250 ms, keyed by live pod. */
  private static final class Sampler implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger samples = new AtomicInteger();
    final AtomicInteger mostHeld = new AtomicInteger();
    final List<String> errors = new CopyOnWriteArrayList<>();
    final List<String> twice = new CopyOnWriteArrayList<>();
    final List<String> renumbered = new CopyOnWriteArrayList<>();
    final Map<String, String> seen = new ConcurrentHashMap<>();

    @Override
    public void run() {
      while (!stop.get()) {
        try {
          sample();
          samples.incrementAndGet();
          Thread.sleep(250);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (RuntimeException | AssertionError e) {
          errors.add(e.toString());
        }
      }
    }

    private void sample() {
      List<Pod> pods = livePods();
      Map<String, String> uidByRef = new HashMap<>();
      for (Pod pod : pods) {
        uidByRef.put(MultusOnRealNodeE2E.name(pod), pod.getMetadata().getUid());
      }
      Map<String, Set<String>> holders = new TreeMap<>();
      whereabouts
          .allocations()
          .forEach(
              (ip, podRef) -> {
                String uid = uidByRef.get(podRef);
                if (uid != null) {
                  holders.computeIfAbsent(ip, i -> new TreeSet<>()).add(uid);
                }
              });
      Set<String> live = new HashSet<>(uidByRef.values());
      for (IPAddress address :
          client.resources(IPAddress.class).inAnyNamespace().list().getItems()) {
        String uid =
            address.getSpec().getPod() == null ? null : address.getSpec().getPod().getUid();
        if (IMPORTED_POOL.equals(address.getSpec().getPool()) && live.contains(uid)) {
          holders.computeIfAbsent(address.getSpec().getIp(), i -> new TreeSet<>()).add(uid);
        }
      }
      mostHeld.accumulateAndGet(holders.size(), Math::max);
      holders.forEach(
          (ip, uids) -> {
            if (uids.size() > 1) {
              twice.add(ip + " held by " + uids + " at sample " + samples.get());
            }
          });
      for (Pod pod : pods) {
        if ("Running".equals(phase(pod)) && hasStatus(pod)) {
          String ip = MultusOnRealNodeE2E.networkStatus(pod).get("net1");
          String first = seen.putIfAbsent(pod.getMetadata().getUid(), ip);
          if (first != null && !first.equals(ip)) {
            renumbered.add(MultusOnRealNodeE2E.name(pod) + ": " + first + " then " + ip);
          }
        }
      }
    }
  }

  /** Scales the Deployments up and down, as drawn from the seed, until stopped. */
  private static final class Scaler implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger scalings = new AtomicInteger();
    final List<String> errors = new CopyOnWriteArrayList<>();

    @Override
    public void run() {
      while (!stop.get()) {
        String ns = NAMESPACES.get(random.nextInt(NAMESPACES.size()));
        int replicas = 2 + random.nextInt(6);
        try {
          client.apps().deployments().inNamespace(ns).withName("workload").scale(replicas);
          scalings.incrementAndGet();
          Thread.sleep(1000 + random.nextInt(2000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (RuntimeException e) {
          errors.add(e.toString());
        }
      }
    }
  }

  /** Whether the API server refuses a pod in {@code namespace} (asked as a dry run). */
  private static boolean refused(String namespace) {
    Pod probe = MultusOnRealNodeE2E.pod(namespace, "hold-probe", Map.of());
    try {
      client.resource(probe).dryRun().create();
      return false;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 422 && e.getCode() != 403) {
        throw e;
      }
      return true;
    }
  }

  /** How many pod creates of the ReplicaSet controller the hold refused, from its Events. */
  private static int refusedCreates() {
    int refused = 0;
    for (String ns : NAMESPACES) {
      for (Event event : client.v1().events().inNamespace(ns).list().getItems()) {
        if ("FailedCreate".equals(event.getReason())
            && event.getMessage() != null
            && event.getMessage().contains("held while it moves to kipam")) {
          refused += event.getCount() == null ? 1 : event.getCount();
        }
      }
    }
    return refused;
  }

  /** Step 4: the definition's ipam becomes kipam's, naming the imported pool. */
  @SuppressWarnings("unchecked")
  private static void switchToKipam(String namespace) throws IOException {
    GenericKubernetesResource nad =
        client
            .genericKubernetesResources("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition")
            .inNamespace(namespace)
            .withName(NETWORK)
            .get();
    Map<String, Object> spec = (Map<String, Object>) nad.getAdditionalProperties().get("spec");
    ObjectNode config = (ObjectNode) JSON.readTree((String) spec.get("config"));
    ((ObjectNode) config.withArray("plugins").get(0))
        .set(
            "ipam", JSON.readTree("{\"type\": \"kipam\", \"pools\": [\"" + IMPORTED_POOL + "\"]}"));
    spec.put("config", JSON.writeValueAsString(config));
    client.resource(nad).update();
  }

  private static boolean poolReady() {
    IPPool pool = client.resources(IPPool.class).withName(IMPORTED_POOL).get();
    return pool != null
        && pool.getStatus() != null
        && pool.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private record Run(int code, String out, String err) {
    String summary() {
      return out.lines()
              .filter(l -> l.contains(" pools, ") || l.startsWith("written:"))
              .collect(Collectors.joining(" | "))
          + " (exit "
          + code
          + ")";
    }
  }

  /** {@code kubectl kipam ...} as a user runs it: the plugin's launcher, a process of its own. */
  private static Run kubectlKipam(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(
        ControlPlaneBinaries.repositoryRoot()
            .resolve("operator/src/main/dist/kubectl-kipam")
            .toString());
    command.addAll(List.of(args));
    command.add("--kubeconfig");
    command.add(node.kubeconfig().toString());
    Process process = new ProcessBuilder(command).start();
    var err = process.getErrorStream();
    var errText = new java.util.concurrent.CompletableFuture<String>();
    Thread reader =
        new Thread(
            () -> {
              try {
                errText.complete(new String(err.readAllBytes(), StandardCharsets.UTF_8));
              } catch (IOException e) {
                errText.completeExceptionally(e);
              }
            });
    reader.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int code = process.waitFor();
    reader.join();
    return new Run(code, out, errText.join());
  }

  static Deployment deployment(String namespace, int replicas) {
    Map<String, String> labels = Map.of("app", "workload");
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName("workload")
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .withMatchLabels(labels)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(labels)
        .addToAnnotations(MultusOnRealNodeE2E.NETWORKS_ANNOTATION, NETWORK)
        .endMetadata()
        .withSpec(KipamOnRealNode.workloadPodSpec())
        .endTemplate()
        .endSpec()
        .build();
  }

  /** Waits until each Deployment has its replicas, every pod Running with its network status. */
  private static void awaitSettled() {
    await("every Deployment's pods Running with net1")
        .atMost(PODS_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              int wanted = 0;
              for (String ns : NAMESPACES) {
                wanted +=
                    client
                        .apps()
                        .deployments()
                        .inNamespace(ns)
                        .withName("workload")
                        .get()
                        .getSpec()
                        .getReplicas();
              }
              List<Pod> pods = testPods();
              return pods.size() == wanted
                  && pods.stream()
                      .allMatch(
                          p ->
                              p.getMetadata().getDeletionTimestamp() == null
                                  && "Running".equals(phase(p))
                                  && hasStatus(p));
            });
  }

  /** net1's address of each pod, from Multus's network-status, by pod UID. */
  private static Map<String, String> net1ByUid(List<Pod> pods) {
    Map<String, String> byUid = new TreeMap<>();
    for (Pod pod : pods) {
      String ip = MultusOnRealNodeE2E.networkStatus(pod).get("net1");
      assertThat(ip).as("net1 of %s", MultusOnRealNodeE2E.name(pod)).isNotNull();
      byUid.put(pod.getMetadata().getUid(), ip);
    }
    return byUid;
  }

  /** The IPAddresses of the imported pool, by the UID of their pod. */
  private static Map<String, IPAddress> importedPoolAddressesByUid() {
    Map<String, IPAddress> byUid = new HashMap<>();
    for (IPAddress address : client.resources(IPAddress.class).inAnyNamespace().list().getItems()) {
      if (IMPORTED_POOL.equals(address.getSpec().getPool()) && address.getSpec().getPod() != null) {
        byUid.put(address.getSpec().getPod().getUid(), address);
      }
    }
    return byUid;
  }

  private static boolean hasStatus(Pod pod) {
    return pod.getMetadata().getAnnotations() != null
        && pod.getMetadata().getAnnotations().containsKey(MultusOnRealNodeE2E.STATUS_ANNOTATION);
  }

  private static String phase(Pod pod) {
    return pod.getStatus() == null ? null : pod.getStatus().getPhase();
  }

  /** The test's pods that have not finished (Terminating ones included). */
  private static List<Pod> livePods() {
    return testPods().stream()
        .filter(p -> !"Succeeded".equals(phase(p)) && !"Failed".equals(phase(p)))
        .toList();
  }

  private static List<Pod> testPods() {
    return NAMESPACES.stream()
        .flatMap(ns -> client.pods().inNamespace(ns).list().getItems().stream())
        .toList();
  }

  private static Set<String> uids(List<Pod> pods) {
    return pods.stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
  }

  static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }
}
