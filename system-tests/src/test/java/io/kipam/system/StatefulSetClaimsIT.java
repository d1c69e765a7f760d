package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ipamclaims.IPAMClaim;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The StatefulSet option ({@code ipam.statefulSetClaims}): kube-controller-manager's StatefulSet
 * controller makes the pods and kube-scheduler places them on three nodes with kipam-node
 * processes; this test plays their kubelets (ADD for a pod bound to the node, then Running and
 * Ready in the pod's status; DEL and the final delete for a pod being deleted). {@code web-0..2}
 * keep their addresses through pod deletion, rescheduling to another node, a rolling update and a
 * scale 3 → 1 → 3 with {@code whenScaled: Retain}; with {@code Delete} the scaled-away ordinals'
 * claims and addresses go, and deleting the StatefulSet frees every address. Ordinary pods churn in
 * three namespaces through the same pool throughout, and every IPAddress is sampled for an address
 * held twice. Seeded ({@code -Dkipam.seed=N}): which pod is deleted, which is moved.
 */
class StatefulSetClaimsIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final Duration WITHIN = Duration.ofSeconds(90);
  private static final String NETWORK = "stable";

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("sts-churn");
  private List<NodeRig> rigs;
  private final SeededRandom random = new SeededRandom();
  private final Map<String, String> attached = new ConcurrentHashMap<>();
  private final Map<String, String> addressOf = new ConcurrentHashMap<>();
  private final AtomicBoolean stop = new AtomicBoolean();
  private ExecutorService kubelet;
  private ChurnAndSample meanwhile;
  private String pool;
  private String namespace;

  @BeforeEach
  void start() throws Exception {
    random.print("StatefulSetClaimsIT");
    KipamCrds.installIpamClaims(client);
    pool = Cluster.readiedPool(client, "sts", Cluster.spec("10.210.0.0/24", 28, 0));
    namespace = Fixtures.namespace(client, "sts");
    rigs = processes.nodes(pool, 3, Map.of());
    meanwhile = ChurnAndSample.start(client, pool, rigs);
    kubelet = Executors.newSingleThreadExecutor();
    kubelet.submit(this::playKubelets);
  }

  @AfterEach
  void stopAll() throws Exception {
    stop.set(true);
    if (kubelet != null) {
      kubelet.shutdown();
      kubelet.awaitTermination(30, TimeUnit.SECONDS);
    }
    ChurnAndSample.check("StatefulSetClaimsIT", meanwhile);
  }

  @Test
  void webPodsKeepTheirAddressesUntilTheirOrdinalOrTheStatefulSetGoes() throws Exception {
    client.apps().statefulSets().inNamespace(namespace).resource(web(3, "Retain")).create();
    Map<String, String> first = awaitRunning(3);
    System.out.println("web-0..2 got " + first);
    for (int i = 0; i < 3; i++) {
      IPAMClaim claim = claim("web-" + i).orElseThrow();
      assertThat(claim.getStatus().getIps()).containsExactly(first.get("web-" + i) + "/24");
      assertThat(claim.getMetadata().getOwnerReferences().get(0).getKind())
          .isEqualTo("StatefulSet");
    }

    // A pod deleted: the controller makes it again, with its address.
    String deleted = "web-" + random.nextInt(3);
    Pod gone = pod(deleted).orElseThrow();
    client.resource(gone).delete();
    awaitPod(deleted, p -> !p.getMetadata().getUid().equals(gone.getMetadata().getUid()));
    assertThat(awaitRunning(3)).as("after %s was deleted", deleted).isEqualTo(first);

    // Rescheduled: its node cordoned, the pod comes back on another node, with its address.
    String moved = "web-" + random.nextInt(3);
    String from = pod(moved).orElseThrow().getSpec().getNodeName();
    cordon(from, true);
    Pod before = pod(moved).orElseThrow();
    client.resource(before).delete();
    awaitPod(
        moved, p -> p.getSpec().getNodeName() != null && !from.equals(p.getSpec().getNodeName()));
    assertThat(awaitRunning(3)).as("after %s moved from %s", moved, from).isEqualTo(first);
    cordon(from, false);

    // A rolling update replaces every pod.
    Map<String, String> uids = uids();
    editWeb(
        s ->
            s.getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .put("restartedAt", Instant.now().toString()));
    await()
        .atMost(WITHIN)
        .until(
            () ->
                uids().entrySet().stream()
                    .noneMatch(e -> e.getValue().equals(uids.get(e.getKey()))));
    assertThat(awaitRunning(3)).as("after a rolling update").isEqualTo(first);

    // Scale 3 -> 1 -> 3 with whenScaled: Retain keeps web-1 and web-2's addresses.
    scale(1);
    awaitRunning(1);
    Thread.sleep(8_000); // kipam-operator's claim sweep runs every 5 s: it must take nothing
    assertThat(claim("web-1")).isPresent();
    assertThat(claim("web-2")).isPresent();
    scale(3);
    assertThat(awaitRunning(3)).as("after 3 -> 1 -> 3, Retain").isEqualTo(first);

    // With whenScaled: Delete, scaling to 1 frees web-1 and web-2.
    editWeb(s -> s.getSpec().getPersistentVolumeClaimRetentionPolicy().setWhenScaled("Delete"));
    scale(1);
    awaitRunning(1);
    await().atMost(WITHIN).until(() -> claim("web-1").isEmpty() && claim("web-2").isEmpty());
    await()
        .atMost(WITHIN)
        .until(
            () ->
                Cluster.subClaimOf(client, pool, first.get("web-1")).isEmpty()
                    && Cluster.subClaimOf(client, pool, first.get("web-2")).isEmpty());
    assertThat(claim("web-0")).isPresent();
    scale(3);
    Map<String, String> again = awaitRunning(3);
    assertThat(again.get("web-0")).isEqualTo(first.get("web-0"));
    System.out.println("after 3 -> 1 -> 3 with whenScaled: Delete: " + again);

    // The StatefulSet deleted: its pods and claims go, and every address with them.
    client.apps().statefulSets().inNamespace(namespace).withName("web").delete();
    await().atMost(WITHIN).until(() -> claims().isEmpty());
    for (String ip : again.values()) {
      await().atMost(WITHIN).until(() -> Cluster.subClaimOf(client, pool, ip).isEmpty());
    }
  }

  // ---- the StatefulSet ----

  private StatefulSet web(int replicas, String whenScaled) {
    return new StatefulSetBuilder()
        .withNewMetadata()
        .withName("web")
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withServiceName("web")
        .withNewSelector()
        .addToMatchLabels("app", "web")
        .endSelector()
        .withNewPersistentVolumeClaimRetentionPolicy()
        .withWhenScaled(whenScaled)
        .withWhenDeleted("Delete")
        .endPersistentVolumeClaimRetentionPolicy()
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app", "web")
        .addToAnnotations("restartedAt", "never")
        .endMetadata()
        .withNewSpec()
        .withAutomountServiceAccountToken(false)
        .withTerminationGracePeriodSeconds(1L)
        .addNewContainer()
        .withName("main")
        .withImage("registry.invalid/never-pulled:1")
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  private void editWeb(java.util.function.Consumer<StatefulSet> change) {
    client
        .apps()
        .statefulSets()
        .inNamespace(namespace)
        .withName("web")
        .edit(
            s -> {
              change.accept(s);
              return s;
            });
  }

  private void scale(int replicas) {
    client.apps().statefulSets().inNamespace(namespace).withName("web").scale(replicas);
  }

  private void cordon(String node, boolean unschedulable) {
    Fixtures.mergePatch(
        client.nodes().withName(node), Map.of("spec", Map.of("unschedulable", unschedulable)));
  }

  /** Waits until web-0..n-1 run (attached by their node), and returns each one's address. */
  private Map<String, String> awaitRunning(int n) {
    return await()
        .atMost(WITHIN)
        .until(
            () -> {
              Map<String, String> ips = new java.util.TreeMap<>();
              for (Pod p : pods()) {
                if (p.getMetadata().getDeletionTimestamp() == null
                    && "Running".equals(p.getStatus().getPhase())
                    && attached.containsKey(p.getMetadata().getUid())) {
                  ips.put(p.getMetadata().getName(), addressOf.get(p.getMetadata().getUid()));
                }
              }
              return ips.size() == n && pods().size() == n ? ips : null;
            },
            java.util.Objects::nonNull);
  }

  private List<Pod> pods() {
    return client.pods().inNamespace(namespace).withLabel("app", "web").list().getItems();
  }

  /** Waits until the pod {@code name} exists and {@code there} holds for it. */
  private void awaitPod(String name, java.util.function.Predicate<Pod> there) {
    await().atMost(WITHIN).until(() -> pod(name).map(there::test).orElse(false));
  }

  private Optional<Pod> pod(String name) {
    return Optional.ofNullable(client.pods().inNamespace(namespace).withName(name).get());
  }

  private Map<String, String> uids() {
    Map<String, String> uids = new java.util.HashMap<>();
    pods().forEach(p -> uids.put(p.getMetadata().getName(), p.getMetadata().getUid()));
    return uids;
  }

  private Optional<IPAMClaim> claim(String pod) {
    return Optional.ofNullable(
        client
            .resources(IPAMClaim.class)
            .inNamespace(namespace)
            .withName(pod + "." + NETWORK)
            .get());
  }

  private List<IPAMClaim> claims() {
    return client.resources(IPAMClaim.class).inNamespace(namespace).list().getItems();
  }

  // ---- the kubelets ----

  /**
   * What the nodes' kubelets would do with the StatefulSet's pods: ADD for a pod bound to a node
   * (retried while the answer is "try again"), then Running and Ready; for a pod being deleted, DEL
   * on its node and the final delete.
   */
  private void playKubelets() {
    while (!stop.get()) {
      try {
        for (Pod pod : pods()) {
          String uid = pod.getMetadata().getUid();
          String node = pod.getSpec().getNodeName();
          if (node == null) {
            continue;
          }
          NodeRig rig = rigs.stream().filter(r -> r.node.equals(node)).findFirst().orElseThrow();
          if (pod.getMetadata().getDeletionTimestamp() != null) {
            if (attached.containsKey(uid)) {
              CniCall.Outcome del = call(rig, "DEL", pod);
              if (!del.ok()) {
                continue;
              }
              attached.remove(uid);
            }
            client.resource(pod).withGracePeriod(0).delete();
          } else if (!attached.containsKey(uid)) {
            CniCall.Outcome add = call(rig, "ADD", pod);
            if (add.ok()) {
              attached.put(uid, node);
              addressOf.put(uid, add.ip());
              running(pod, add.ip());
            } else if (!add.stdout().contains("\"code\":11,")) {
              System.out.println("ADD of " + pod.getMetadata().getName() + ": " + add.stdout());
            }
          }
        }
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        // An object changed meanwhile: the next round looks again.
      }
    }
  }

  private void running(Pod pod, String ip) {
    String now = Instant.now().toString();
    Fixtures.mergePatch(
        client
            .pods()
            .inNamespace(namespace)
            .withName(pod.getMetadata().getName())
            .subresource("status"),
        Map.of(
            "status",
            Map.of(
                "phase",
                "Running",
                "podIP",
                ip,
                "conditions",
                List.of(
                    Map.of("type", "Ready", "status", "True", "lastTransitionTime", now),
                    Map.of(
                        "type", "ContainersReady", "status", "True", "lastTransitionTime", now)))));
  }

  private CniCall.Outcome call(NodeRig rig, String command, Pod pod) {
    return CniCall.run(
        rig.kipam,
        CniCall.env(command, "c-" + pod.getMetadata().getUid(), "eth0", pod),
        "{\"cniVersion\":\"1.1.0\",\"name\":\""
            + NETWORK
            + "\",\"type\":\"bridge\",\"ipam\":{\"type\":\"kipam\",\"pools\":[\""
            + pool
            + "\"],\"statefulSetClaims\":true,\"socket\":\""
            + rig.daemon.socket
            + "\"}}");
  }
}
