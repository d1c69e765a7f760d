package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.testing.RealNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * kipam on a real node (kubelet, containerd, runc), installed from {@code config/default} and the
 * images this build made, serving real pods: every pod's address is the one its IPAddress records,
 * and addresses come back on scale-down and through the garbage collector (kept Terminating while
 * kipam-node is away); a static pod's address is held by its Node and stays when its mirror Pod is
 * deleted; a pod requesting {@code kipam.io/ip} beyond the node's addresses waits until one frees
 * up; pods created while kipam-node restarts each get one address. Fails, never skips, when the
 * node cannot start. The pool's CIDR is data: nothing is sent outside the node's network namespace.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealNodeKipamE2E {

  static final String POOL = "real-node-pods";
  static final List<String> NAMESPACES = List.of("team-a", "team-b", "team-c");
  private static final Duration PODS_TIMEOUT = Duration.ofMinutes(4);

  private static long begin;
  private static RealNode node;
  private static KipamOnRealNode kipam;
  private static KubernetesClient client;

  @BeforeAll
  static void installKipam() {
    begin = System.nanoTime();
    node = RealNode.start();
    client = node.client();
    long installing = System.nanoTime();
    kipam = KipamOnRealNode.install(node, "real-node-pods", List.of(POOL));
    kipam.awaitReady();
    System.out.printf(
        "kipam-operator and kipam-node Ready %.1f s after kubectl apply -k began%n",
        seconds(installing));
    client.resource(pool()).create();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(kipam.nodeCapacity()).isGreaterThanOrEqualTo(30));
    for (String ns : NAMESPACES) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
  }

  @AfterAll
  static void stopNode() {
    KipamOnRealNode.closeAfterWorkloads(node, kipam, NAMESPACES);
    System.out.printf("real-node tier: %.1f s in all%n", seconds(begin));
  }

  /**
   * The pool: a /26 with two ranges excluded, so its capacity (38) is small enough for the
   * scheduler's count of {@code kipam.io/ip} to matter; no reuse delay, so a freed address serves
   * the next pod at once.
   */
  static IPPool pool() {
    IPPool pool = new IPPool();
    pool.setSpec(new IPPoolSpec());
    pool.getMetadata().setName(POOL);
    pool.getSpec().setCidr("10.250.0.0/26");
    pool.getSpec().setBlockSize(28);
    pool.getSpec().setGateway("10.250.0.1");
    pool.getSpec().setExclude(List.of("10.250.0.32/29", "10.250.0.48/28"));
    pool.getSpec().setReuseDelaySeconds(0);
    return pool;
  }

  @Test
  @Order(1)
  void thirtyPodsGetTheAddressesTheirIpAddressesRecordAndGiveThemBack() {
    long scaleUp = System.nanoTime();
    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).resource(workload(ns, "web", 10)).create();
    }
    awaitRunning(30);
    System.out.printf("30 pods Running %.1f s after scale-up%n", seconds(scaleUp));

    List<Pod> pods = workloadPods();
    Map<String, IPAddress> byOwner = addressesByOwner();
    assertThat(byOwner).hasSize(30);
    for (Pod pod : pods) {
      IPAddress address = byOwner.get(pod.getMetadata().getUid());
      assertThat(address).as("IPAddress owned by %s", pod.getMetadata().getName()).isNotNull();
      assertThat(address.getMetadata().getNamespace()).isEqualTo(pod.getMetadata().getNamespace());
      assertThat(pod.getStatus().getPodIP()).isEqualTo(address.getSpec().getIp());
    }
    assertThat(pods.stream().map(p -> p.getStatus().getPodIP()).distinct()).hasSize(30);
    String listed = node.controlPlane().kubectl("get", "ipaddresses.kipam.io", "-A");
    System.out.print(listed);
    for (Pod pod : pods) {
      assertThat(listed).contains(pod.getStatus().getPodIP());
    }
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(poolStatus().getAllocated()).isEqualTo(30));

    long scaleDown = System.nanoTime();
    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("web").scale(0);
    }
    awaitAddressesReturned();
    System.out.printf(
        "scaled to 0: every address returned %.1f s after scale-down%n", seconds(scaleDown));

    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("web").scale(4);
    }
    awaitRunning(12);
    // The Deployments go to 0 first, so no replacement pod takes the forcibly deleted ones' place.
    // Through the garbage collector, not CNI DEL: kipam-node is off the node first (a
    // nodeSelector no Node matches), so no DEL can release anything until it is back.
    kipam.pauseNodeDaemon();
    long forced = System.nanoTime();
    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("web").scale(0);
      node.controlPlane()
          .kubectl("delete", "pods", "-n", ns, "-l", "app=web", "--grace-period=0", "--force");
    }
    // The garbage collector deletes their IPAddresses, but each stays, Terminating, holding its
    // address: only kipam-node ends an attachment (kipam.io/attachment), once it is back.
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                assertThat(client.resources(IPAddress.class).inAnyNamespace().list().getItems())
                    .hasSize(12)
                    .allMatch(a -> a.getMetadata().getDeletionTimestamp() != null));
    System.out.printf(
        "12 pods deleted by force with kipam-node away: the garbage collector deleted their"
            + " IPAddresses %.1f s after the first delete; they stay Terminating%n",
        seconds(forced));
    kipam.resumeNodeDaemon();
    kipam.awaitReady();
    awaitAddressesReturned();
  }

  @Test
  @Order(2)
  void staticPodKeepsAnAddressHeldByItsNode() throws Exception {
    Path manifest = node.staticPodDir().resolve("static-web.yaml");
    Files.writeString(
        manifest,
        """
        apiVersion: v1
        kind: Pod
        metadata:
          name: static-web
          namespace: default
        spec:
          terminationGracePeriodSeconds: 2
          containers:
            - name: workload
              image: kipam.io/workload:1
              imagePullPolicy: Never
        """);
    try {
      String mirrorName = "static-web-" + RealNode.NODE_NAME;
      await()
          .atMost(PODS_TIMEOUT)
          .untilAsserted(
              () -> {
                Pod mirror = client.pods().inNamespace("default").withName(mirrorName).get();
                assertThat(mirror).isNotNull();
                assertThat(mirror.getStatus().getPhase()).isEqualTo("Running");
                assertThat(mirror.getStatus().getPodIP()).startsWith("10.250.0.");
              });
      Pod mirror = client.pods().inNamespace("default").withName(mirrorName).get();
      IPAddress address =
          client.resources(IPAddress.class).inNamespace("default").list().getItems().stream()
              .filter(a -> a.getSpec().getPod().getName().equals(mirrorName))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no IPAddress of " + mirrorName));
      assertThat(address.getSpec().getIp()).isEqualTo(mirror.getStatus().getPodIP());
      assertThat(address.getMetadata().getOwnerReferences())
          .as("a static pod's address is held by its Node")
          .singleElement()
          .satisfies(
              o -> {
                assertThat(o.getKind()).isEqualTo("Node");
                assertThat(o.getName()).isEqualTo(RealNode.NODE_NAME);
              });
      System.out.printf(
          "static pod %s: %s, IPAddress %s held by its Node%n",
          mirrorName, mirror.getStatus().getPodIP(), address.getMetadata().getName());

      // Kept: the garbage collector sees a live holder, and kubelet's syncs do not re-run ADD.
      await()
          .during(Duration.ofSeconds(15))
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                IPAddress now =
                    client
                        .resources(IPAddress.class)
                        .inNamespace("default")
                        .withName(address.getMetadata().getName())
                        .get();
                assertThat(now).isNotNull();
                assertThat(now.getMetadata().getUid()).isEqualTo(address.getMetadata().getUid());
                assertThat(now.getMetadata().getDeletionTimestamp()).isNull();
                Pod current = client.pods().inNamespace("default").withName(mirrorName).get();
                assertThat(current.getStatus().getPodIP()).isEqualTo(address.getSpec().getIp());
              });
    } finally {
      // Also when the test fails: a static pod left running would hold its address for the
      // tests that follow.
      Files.deleteIfExists(manifest);
    }
    awaitAddressesReturned();
  }

  @Test
  @Order(3)
  void aPodBeyondTheNodesAddressesWaitsUntilOneFreesUp() {
    long capacity = kipam.nodeCapacity();
    System.out.printf("kipam.io/ip on the node: %d%n", capacity);
    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("web").scale(10);
    }
    int rest = (int) capacity - 30;
    client
        .apps()
        .deployments()
        .inNamespace("team-c")
        .resource(workload("team-c", "fill", rest))
        .create();
    awaitRunning((int) capacity);

    client
        .apps()
        .deployments()
        .inNamespace("team-c")
        .resource(workload("team-c", "one-too-many", 1))
        .create();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> {
              Pod waiting = podOf("team-c", "one-too-many");
              assertThat(waiting.getStatus().getPhase()).isEqualTo("Pending");
              assertThat(waiting.getStatus().getConditions())
                  .anySatisfy(
                      c -> {
                        assertThat(c.getType()).isEqualTo("PodScheduled");
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getMessage()).contains("Insufficient kipam.io/ip");
                      });
            });
    System.out.printf(
        "pod %d Pending: %s%n",
        capacity + 1,
        podOf("team-c", "one-too-many").getStatus().getConditions().stream()
            .filter(c -> "PodScheduled".equals(c.getType()))
            .findFirst()
            .orElseThrow()
            .getMessage());

    long freed = System.nanoTime();
    client.apps().deployments().inNamespace("team-a").withName("web").scale(9);
    awaitRunning((int) capacity);
    Pod started = podOf("team-c", "one-too-many");
    assertThat(started.getStatus().getPodIP()).startsWith("10.250.0.");
    System.out.printf(
        "it Running with %s %.1f s after a pod was scaled away%n",
        started.getStatus().getPodIP(), seconds(freed));

    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("web").scale(0);
    }
    client.apps().deployments().inNamespace("team-c").withName("fill").delete();
    client.apps().deployments().inNamespace("team-c").withName("one-too-many").delete();
    awaitAddressesReturned();
  }

  @Test
  @Order(4)
  void restartingKipamNodeWhilePodsAreCreatedGivesEveryPodOneAddress() {
    Pod daemon = kipam.nodeDaemonPod();
    long scaleUp = System.nanoTime();
    // Some pods get their address from the daemon that goes, the others from its successor: it
    // must see what the first one wrote and hand out nothing twice.
    client.apps().deployments().inNamespace("team-a").withName("web").scale(10);
    await()
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> runningWorkloadPods() >= 1);
    // Killed at once (no grace period), as a crash would, and 20 more pods created right after:
    // their ADDs find no daemon until the DaemonSet's next one serves the socket.
    client.pods().resource(daemon).withGracePeriod(0).delete();
    client.apps().deployments().inNamespace("team-b").withName("web").scale(10);
    client.apps().deployments().inNamespace("team-c").withName("web").scale(10);
    System.out.printf(
        "kipam-node pod %s deleted %.1f s after scale-up, %d of 30 pods Running%n",
        daemon.getMetadata().getName(), seconds(scaleUp), runningWorkloadPods());
    awaitRunning(30);
    kipam.awaitReady();
    assertThat(kipam.nodeDaemonPod().getMetadata().getUid())
        .isNotEqualTo(daemon.getMetadata().getUid());
    System.out.printf("30 pods Running %.1f s after scale-up%n", seconds(scaleUp));

    List<Pod> pods = workloadPods();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> {
              Map<String, IPAddress> byOwner = addressesByOwner();
              assertThat(byOwner).hasSize(30);
              // No address held for a sandbox the restart left behind.
              assertThat(client.resources(IPAddress.class).inAnyNamespace().list().getItems())
                  .hasSize(30);
              for (Pod pod : pods) {
                IPAddress address = byOwner.get(pod.getMetadata().getUid());
                assertThat(address).as("IPAddress of %s", pod.getMetadata().getName()).isNotNull();
                assertThat(address.getSpec().getIp()).isEqualTo(pod.getStatus().getPodIP());
              }
              assertThat(poolStatus().getAllocated()).isEqualTo(30);
            });
    assertThat(pods.stream().map(p -> p.getStatus().getPodIP()).distinct()).hasSize(30);
    long retried =
        NAMESPACES.stream()
            .flatMap(ns -> client.v1().events().inNamespace(ns).list().getItems().stream())
            .filter(e -> "FailedCreatePodSandBox".equals(e.getReason()))
            .count();
    System.out.printf("sandbox creations kubelet retried during the restart: %d%n", retried);
  }

  @Test
  @Order(5)
  void aStatefulSetPodDeletedAndMadeAgainByItsControllerComesBackWithItsAddress() {
    Path ipamClaims =
        Path.of(System.getProperty("kipam.configDir", "../config"))
            .resolve("ipamclaims")
            .toAbsolutePath();
    node.controlPlane().kubectl("apply", "--server-side", "-k", ipamClaims.toString());
    String ns = "team-sts";
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    Deployment template = workload(ns, "db", 1);
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .resource(
            new StatefulSetBuilder()
                .withNewMetadata()
                .withName("db")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withReplicas(1)
                .withServiceName("db")
                .withSelector(template.getSpec().getSelector())
                .withTemplate(template.getSpec().getTemplate())
                .endSpec()
                .build())
        .create();
    Pod first = awaitRunningPod(ns, "db-0", null);
    String ip = first.getStatus().getPodIP();
    IPAMClaim claim =
        client.resources(IPAMClaim.class).inNamespace(ns).withName("db-0.real-node-pods").get();
    assertThat(claim.getStatus().getIps()).containsExactly(ip + "/26");

    long deleted = System.nanoTime();
    client.resource(first).delete();
    Pod again = awaitRunningPod(ns, "db-0", first.getMetadata().getUid());
    assertThat(again.getStatus().getPodIP()).isEqualTo(ip);
    System.out.printf(
        "StatefulSet pod db-0 deleted and made again by its controller: Running %.1f s later with"
            + " its address %s%n",
        seconds(deleted), ip);

    client.apps().statefulSets().inNamespace(ns).withName("db").delete();
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(client.resources(IPAMClaim.class).inNamespace(ns).list().getItems())
                  .isEmpty();
              assertThat(client.resources(IPAddress.class).inNamespace(ns).list().getItems())
                  .isEmpty();
              assertThat(
                      client
                          .resources(io.kipam.api.v1alpha1.IPBlock.class)
                          .withLabel(io.kipam.api.ApiConstants.LABEL_CLAIM)
                          .list()
                          .getItems())
                  .isEmpty();
            });
  }

  @Test
  @Order(6)
  void aPodAnnotatedWithKipamIpsRunsWithThatAddress() {
    String ns = "team-a";
    Deployment template = workload(ns, "fixed", 1);
    // An address of the pool no pod holds now (pods of the earlier tests still run).
    List<String> held =
        client.resources(IPAddress.class).inAnyNamespace().list().getItems().stream()
            .map(a -> a.getSpec().getIp())
            .toList();
    String ip = null;
    for (int last = 47; last >= 2 && ip == null; last--) {
      String candidate = "10.250.0." + last;
      if ((last < 32 || last >= 40) && !held.contains(candidate)) {
        ip = candidate;
      }
    }
    assertThat(ip).as("a free address of the pool").isNotNull();
    Pod fixed =
        new io.fabric8.kubernetes.api.model.PodBuilder()
            .withNewMetadata()
            .withName("fixed")
            .withNamespace(ns)
            .addToAnnotations(io.kipam.api.ApiConstants.ANNOTATION_IPS, ip)
            .endMetadata()
            .withSpec(template.getSpec().getTemplate().getSpec())
            .build();
    long created = System.nanoTime();
    client.resource(fixed).create();
    Pod running = awaitRunningPod(ns, "fixed", null);
    assertThat(running.getStatus().getPodIP()).isEqualTo(ip);
    System.out.printf(
        "pod %s/fixed with kipam.io/ips %s: Running with it %.1f s after it was created%n",
        ns, ip, seconds(created));
    client.resource(running).delete();
    await()
        .atMost(Duration.ofMinutes(1))
        .until(() -> client.pods().inNamespace(ns).withName("fixed").get() == null);
  }

  /** The pod {@code namespace/name} once Running with an address, other than {@code notUid}. */
  private static Pod awaitRunningPod(String namespace, String name, String notUid) {
    return KipamOnRealNode.awaitRunningPod(
        client, namespace, name, notUid, p -> p.getStatus().getPodIP() != null, PODS_TIMEOUT);
  }

  static long runningWorkloadPods() {
    return workloadPods().stream().filter(p -> "Running".equals(p.getStatus().getPhase())).count();
  }

  static Pod podOf(String namespace, String app) {
    List<Pod> pods = client.pods().inNamespace(namespace).withLabel("app", app).list().getItems();
    assertThat(pods).hasSize(1);
    return pods.get(0);
  }

  private static void awaitAddressesReturned() {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(client.resources(IPAddress.class).inAnyNamespace().list().getItems())
                  .isEmpty();
              assertThat(poolStatus().getAllocated()).isZero();
            });
  }

  static Deployment workload(String namespace, String name, int replicas) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .addToMatchLabels("app", name)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app", name)
        .endMetadata()
        .withNewSpec()
        .withTerminationGracePeriodSeconds(2L)
        .addNewContainer()
        .withName("workload")
        .withImage("kipam.io/workload:1")
        .withImagePullPolicy("Never")
        .withNewResources()
        .addToRequests("kipam.io/ip", new Quantity("1"))
        .addToLimits("kipam.io/ip", new Quantity("1"))
        .endResources()
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /** Pods of the test's namespaces (kipam's own are on the host network). */
  static List<Pod> workloadPods() {
    return NAMESPACES.stream()
        .flatMap(ns -> client.pods().inNamespace(ns).list().getItems().stream())
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  static void awaitRunning(int count) {
    await()
        .atMost(PODS_TIMEOUT)
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(() -> KipamOnRealNode.assertRunning(workloadPods(), count, "10.250.0."));
  }

  /** Every IPAddress by the UID of the Pod that owns it. */
  static Map<String, IPAddress> addressesByOwner() {
    Map<String, IPAddress> byOwner = new HashMap<>();
    for (IPAddress address : client.resources(IPAddress.class).inAnyNamespace().list().getItems()) {
      for (OwnerReference owner : address.getMetadata().getOwnerReferences()) {
        if ("Pod".equals(owner.getKind())) {
          IPAddress previous = byOwner.put(owner.getUid(), address);
          assertThat(previous).as("a second IPAddress owned by pod %s", owner.getName()).isNull();
        }
      }
    }
    return byOwner;
  }

  static io.kipam.api.v1alpha1.IPPoolStatus poolStatus() {
    IPPool pool = client.resources(IPPool.class).withName(POOL).get();
    assertThat(pool.getStatus()).isNotNull();
    return pool.getStatus();
  }

  static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }
}
