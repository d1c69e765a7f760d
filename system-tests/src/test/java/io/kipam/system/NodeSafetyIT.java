package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.Installer;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.RuntimeRetries;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The paths to a duplicate or a lost address that only a real API server shows: pools re-created
 * under one name, networks sharing a pool, owners that do not exist, DELs with another pod's
 * identity, objects the daemon cannot read, watches that stop, and pool selectors. Pods are spread
 * over three namespaces.
 */
class NodeSafetyIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static NodeUnderTest rig;
  private static Path dir;
  private static Path kipam;
  private static DaemonProcess daemon;
  private static String node;
  private static List<String> namespaces;
  private static String bootPool;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final ControlPlane controlPlane = ControlPlane.shared();

  @BeforeAll
  static void startDaemon(ControlPlane controlPlane, KubernetesClient client) throws Exception {
    rig = NodeUnderTest.register(client, "kipam-safety-it", "node");
    dir = rig.dir;
    node = rig.node;
    namespaces =
        List.of(
            Fixtures.namespace(client, "q0"),
            Fixtures.namespace(client, "q1"),
            Fixtures.namespace(client, "q2"));
    bootPool = Cluster.readiedPool(client, "boot", Cluster.spec("10.235.0.0/24", 28, 0));
    daemon = rig.start(controlPlane.adminKubeconfig(), bootPool);
    kipam = rig.kipam;
  }

  @AfterAll
  static void stopDaemon() throws Exception {
    Close.all(rig);
  }

  /** The class's daemon started again with its env as it now is, and ready. */
  private static void restartDaemon() throws InterruptedException {
    daemon.kill();
    daemon.start();
    daemon.awaitReady(kipam, bootPool);
  }

  private static CniCall.Outcome call(
      String command, Pod pod, String containerId, String network, String... pools) {
    return CniCall.run(
        kipam,
        CniCall.env(command, containerId, pod),
        Cluster.config("1.1.0", daemon.socket.toString(), pools).replace("kipam-test", network));
  }

  private String singleAddressPool(String prefix, String address) {
    String pool = Fixtures.uniqueName(prefix);
    var spec = Cluster.spec(address + "/32", 32, 0);
    Cluster.poolReadiedByOperator(client, pool, spec);
    return pool;
  }

  @Test
  void aPoolCreatedAgainUnderItsNameIsReadWithItsNewGeometry() throws Exception {
    String pool = Cluster.readiedPool(client, "again", Cluster.spec("10.236.0.0/24", 28, 0));
    Pod pod = Cluster.pod(client, namespaces.get(0), "again-0", node);
    assertThat(call("ADD", pod, "c-again-0", "net", pool).ip()).startsWith("10.236.0.");
    assertThat(call("DEL", pod, "c-again-0", "net", pool).ok()).isTrue();

    client.resources(IPPool.class).withName(pool).delete();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> client.resources(IPPool.class).withName(pool).get() == null);
    Cluster.poolReadiedByOperator(client, pool, Cluster.spec("10.237.0.0/24", 26, 0));

    Pod next = Cluster.pod(client, namespaces.get(1), "again-1", node);
    CniCall.Outcome added =
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> call("ADD", next, "c-again-1", "net", pool), CniCall.Outcome::ok);
    assertThat(added.ip()).startsWith("10.237.0.");
    assertThat(call("DEL", next, "c-again-1", "net", pool).ok()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#gcGrace")
  void gcOfOneNetworkNeverReleasesAnotherNetworksAddressesInASharedPool(Map<String, String> gcGrace)
      throws Exception {
    gcGrace.forEach(daemon::withEnv);
    restartDaemon();
    try {
      gcOfOneNetworkSparesTheOther(daemon.settings().gcGrace());
    } finally {
      daemon.withEnv("KIPAM_GC_GRACE_SECONDS", daemon.environment().get("KIPAM_GC_GRACE_SECONDS"));
      restartDaemon();
    }
  }

  private void gcOfOneNetworkSparesTheOther(Duration grace) throws Exception {
    String pool = Cluster.readiedPool(client, "shared", Cluster.spec("10.238.0.0/24", 28, 0));
    Pod a = Cluster.pod(client, namespaces.get(0), Fixtures.uniqueName("net-a-pod"), node);
    Pod b = Cluster.pod(client, namespaces.get(1), Fixtures.uniqueName("net-b-pod"), node);
    long added = System.nanoTime();
    // The pool is Ready; the daemon, just restarted, may not have seen it yet: that answer (101,
    // "not Ready") alone is tried again, as a runtime tries a failed sandbox again.
    String ipA =
        new RuntimeRetries()
            .call(
                () -> call("ADD", a, "c-net-a", "net-a", pool),
                NodeRig::poolNotReadyYet,
                NodeRig.POOL_NOT_READY_WITHIN)
            .ip();
    String ipB = call("ADD", b, "c-net-b", "net-b", pool).ip();

    // GC of net-a listing none of its attachments: net-a's address goes once it is older than the
    // daemon's grace, and not before.
    String gc =
        "{\"cniVersion\":\"1.1.0\",\"name\":\"net-a\",\"type\":\"bridge\",\"ipam\":{\"type\":"
            + "\"kipam\",\"pools\":[\""
            + pool
            + "\"],\"socket\":\""
            + daemon.socket
            + "\"},\"cni.dev/valid-attachments\":[]}";
    assertThat(CniCall.run(kipam, Map.of("CNI_COMMAND", "GC", "CNI_PATH", "/x"), gc).ok()).isTrue();
    Duration age = Duration.ofNanos(System.nanoTime() - added);
    if (age.compareTo(grace) < 0) {
      assertThat(Cluster.addresses(client, pool))
          .as("a GC %d ms after the ADD, within the grace of %s", age.toMillis(), grace)
          .extracting(x -> x.getSpec().getIp())
          .contains(ipA);
    }
    await()
        .atMost(grace.plusSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(CniCall.run(kipam, Map.of("CNI_COMMAND", "GC", "CNI_PATH", "/x"), gc).ok())
                  .isTrue();
              assertThat(Cluster.addresses(client, pool))
                  .extracting(x -> x.getSpec().getIp())
                  .doesNotContain(ipA);
            });
    System.out.printf(
        "net-a's address released by GC %.1f s after its ADD (grace %s)%n",
        (System.nanoTime() - added) / 1e9, grace);

    assertThat(Cluster.addresses(client, pool))
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.getSpec().getIp()).isEqualTo(ipB);
              assertThat(x.getSpec().getNetwork()).isEqualTo("net-b");
            });
    assertThat(call("DEL", b, "c-net-b", "net-b", pool).ok()).isTrue();
  }

  @Test
  void anAddForAPodUidTheApiDoesNotKnowWritesNothing() {
    String pool = singleAddressPool("owner", "10.239.0.7");
    Pod pod = Cluster.pod(client, namespaces.get(2), "owner-0", node);
    String wrongUid = UUID.randomUUID().toString();

    CniCall.Outcome outcome =
        CniCall.run(
            kipam,
            CniCall.env("ADD", "c-owner", "eth0", namespaces.get(2), "owner-0", wrongUid),
            Cluster.config("1.1.0", daemon.socket.toString(), pool));

    assertThat(outcome.stdout()).contains("\"code\":11,").contains(wrongUid);
    assertThat(Cluster.addresses(client, pool)).isEmpty();
    assertThat(
            client
                .resources(IPBlock.class)
                .withLabel(ApiConstants.LABEL_POOL, pool)
                .list()
                .getItems())
        .isEmpty();
    assertThat(pod.getMetadata().getUid()).isNotEqualTo(wrongUid);
  }

  @Test
  void aStaticPodGetsAnAddressHeldByItsNode() throws Exception {
    String pool = Cluster.readiedPool(client, "static", Cluster.spec("10.240.0.0/24", 28, 0));
    // The kubelet knows a static pod by the hash of its manifest; the API by its mirror Pod.
    String kubeletUid = "0123456789abcdef0123456789abcdef";
    Pod mirror =
        client
            .pods()
            .inNamespace(namespaces.get(0))
            .resource(
                new io.fabric8.kubernetes.api.model.PodBuilder()
                    .withNewMetadata()
                    .withName("static-web-" + node)
                    .addToAnnotations("kubernetes.io/config.mirror", kubeletUid)
                    .endMetadata()
                    .withNewSpec()
                    .withNodeName(node)
                    .addNewContainer()
                    .withName("main")
                    .withImage("registry.invalid/never-pulled:1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();

    CniCall.Outcome outcome =
        CniCall.run(
            kipam,
            CniCall.env(
                "ADD",
                "c-static",
                "eth0",
                namespaces.get(0),
                mirror.getMetadata().getName(),
                kubeletUid),
            Cluster.config("1.1.0", daemon.socket.toString(), pool));

    String ip = outcome.ip();
    IPAddress address =
        client
            .resources(IPAddress.class)
            .inNamespace(namespaces.get(0))
            .withName(ResourceNames.addressName(pool, IpAddress.parse(ip)))
            .get();
    // Held by its Node, not by the mirror Pod, which kubelet creates again with a new UID
    // whenever someone deletes it.
    assertThat(address.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Node");
              assertThat(o.getName()).isEqualTo(node);
              assertThat(o.getUid())
                  .isEqualTo(client.nodes().withName(node).get().getMetadata().getUid());
            });
    assertThat(address.getSpec().getPod().getUid()).isEqualTo(mirror.getMetadata().getUid());
    // The garbage collector keeps it: its owner exists.
    await()
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(10))
        .until(() -> !Cluster.addresses(client, pool).isEmpty());
  }

  @Test
  void aDelNamingAnotherPodLeavesThatPodsAddress() throws Exception {
    String pool = Cluster.readiedPool(client, "delid", Cluster.spec("10.241.128.0/24", 28, 0));
    Pod a = Cluster.pod(client, namespaces.get(0), "del-a", node);
    Pod b = Cluster.pod(client, namespaces.get(1), "del-b", node);
    call("ADD", b, "c-shared-id", "net", pool).ip();

    // A's identity with the container ID B uses now.
    assertThat(call("DEL", a, "c-shared-id", "net", pool).ok()).isTrue();

    assertThat(Cluster.addresses(client, pool))
        .singleElement()
        .satisfies(x -> assertThat(x.getSpec().getPod().getName()).isEqualTo("del-b"));
    assertThat(call("DEL", b, "c-shared-id", "net", pool).ok()).isTrue();
    assertThat(Cluster.addresses(client, pool)).isEmpty();
  }

  @Test
  void anIPAddressTheDaemonCannotReadKeepsItsAddressTaken() throws Exception {
    String pool = singleAddressPool("unreadable", "10.242.128.9");
    IPAddress garbage = new IPAddress();
    garbage.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, IpAddress.parse("10.242.128.9")))
            .withNamespace(namespaces.get(2))
            .withLabels(Map.of(ApiConstants.LABEL_NODE, node, ApiConstants.LABEL_POOL, pool))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp("10.242.128.9");
    spec.setPool(pool);
    spec.setBlock("not a block name");
    spec.setNode(node);
    spec.setNetwork("net");
    spec.setPod(new PodReference("someone", UUID.randomUUID().toString()));
    spec.setContainerID("c-someone");
    spec.setInterfaceName("eth0");
    garbage.setSpec(spec);
    client.resource(garbage).create();
    Pod pod = Cluster.pod(client, namespaces.get(0), "after-garbage", node);

    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(call("ADD", pod, "c-after-garbage", "net", pool).stdout())
                    .as("refused: the address is taken by an object this node cannot read")
                    .containsAnyOf("\"code\":100,", "\"code\":11,"));

    client.resource(garbage).delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(call("ADD", pod, "c-after-garbage", "net", pool).ip())
                    .isEqualTo("10.242.128.9"));
  }

  @Test
  void readinessFollowsTheWatches() {
    String config = Cluster.config("1.1.0", daemon.socket.toString(), "any");
    controlPlane.stopApiServer();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () ->
                  assertThat(CniCall.run(kipam, Map.of("CNI_COMMAND", "STATUS"), config).stdout())
                      .contains("\"code\":50,"));
    } finally {
      controlPlane.startApiServer();
    }
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () ->
                assertThat(CniCall.run(kipam, Map.of("CNI_COMMAND", "STATUS"), config).ok())
                    .isTrue());
  }

  @Test
  void startUpWaitsForTheApiAsLongAsItTakesAndSaysSo() throws Exception {
    String lateNode = Fixtures.uniqueName("patient");
    Fixtures.registerNode(client, lateNode);
    DaemonProcess late = new DaemonProcess(dir, lateNode, controlPlane.adminKubeconfig());
    Path lateKipam = Installer.install(dir.resolve("bin-patient"), late.socket);
    controlPlane.stopApiServer();
    try {
      late.start();
      late.awaitLogged("still waiting for the API server", Duration.ofSeconds(90));
      assertThat(late.alive()).isTrue();
    } finally {
      controlPlane.startApiServer();
    }
    try {
      late.awaitReady(lateKipam, "any");
    } finally {
      late.close();
    }
  }

  @Test
  void poolSelectorsAreEnforcedWithAMessageNamingThem() throws Exception {
    String pool = Fixtures.uniqueName("selective");
    var spec = Cluster.spec("10.243.128.0/24", 28, 0);
    spec.setNodeSelector(Cluster.matchLabel("kipam-test/zone", "a"));
    Cluster.poolReadiedByOperator(client, pool, spec);
    Pod pod = Cluster.pod(client, namespaces.get(1), "selective", node);

    CniCall.Outcome refused = call("ADD", pod, "c-selective", "net", pool);
    assertThat(refused.stdout())
        .contains("\"code\":101,")
        .contains("spec.nodeSelector")
        .contains("kipam-test/zone=a");

    Fixtures.label(client.nodes().withName(node), "kipam-test/zone", "a");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> call("ADD", pod, "c-selective", "net", pool).ip());

    String byNamespace = Fixtures.uniqueName("by-ns");
    var nsSpec = Cluster.spec("10.244.128.0/24", 28, 0);
    nsSpec.setNamespaceSelector(Cluster.matchLabel("kipam-test/team", "blue"));
    Cluster.poolReadiedByOperator(client, byNamespace, nsSpec);
    Pod other = Cluster.pod(client, namespaces.get(2), "by-ns", node);
    assertThat(call("ADD", other, "c-by-ns", "net", byNamespace).stdout())
        .contains("\"code\":101,")
        .contains("spec.namespaceSelector")
        .contains("namespace " + namespaces.get(2));
    Fixtures.label(client.namespaces().withName(namespaces.get(2)), "kipam-test/team", "blue");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> call("ADD", other, "c-by-ns", "net", byNamespace).ip());
  }
}
