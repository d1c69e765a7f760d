package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.Installer;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input and an absent API server: clear CNI errors, and nothing allocated. */
class NodeFailuresIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static Path kipam;
  private static NodeUnderTest rig;
  private static Path dir;
  private static DaemonProcess daemon;
  private static String node;
  private static String namespace;
  private static Pod pod;
  private static String v4;
  private static String full;
  private static String notReady;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final ControlPlane controlPlane = ControlPlane.shared();

  @BeforeAll
  static void startDaemon(ControlPlane controlPlane, KubernetesClient client) throws Exception {
    rig = NodeUnderTest.register(client, "kipam-failures-it", "node");
    dir = rig.dir;
    node = rig.node;
    namespace = Fixtures.namespace(client, "failures");
    pod = Cluster.pod(client, namespace, "victim", node);
    v4 = Fixtures.uniqueName("v4");
    var v4Spec = Cluster.spec("10.241.0.0/24", 28, 0);
    v4Spec.setNetwork(Fixtures.uniqueName("failures-net"));
    Cluster.poolReadiedByOperator(client, v4, v4Spec);
    full = Fixtures.uniqueName("full");
    Cluster.poolReadiedByOperator(
        client, full, Cluster.oneAddressSpec("10.243.0.0/24", "10.243.0.5", 0));
    notReady = Fixtures.uniqueName("unready");
    // It overlaps v4 in v4's network: the operator refuses it, so it never becomes Ready.
    var unreadySpec = Cluster.spec("10.241.0.0/25", 28, 0);
    unreadySpec.setNetwork(v4Spec.getNetwork());
    Cluster.poolRefusedByOperator(client, notReady, unreadySpec);
    daemon = rig.start(controlPlane.adminKubeconfig(), v4);
    kipam = rig.kipam;
    // The one address of the full pool goes to another pod.
    Pod holder = Cluster.pod(client, namespace, "holder", node);
    assertThat(
            CniCall.run(kipam, CniCall.env("ADD", "c-holder", holder), config("1.0.0", full)).ok())
        .isTrue();
    // Until kipam-operator has counted it, the pool still shows a free address: "try again".
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                "0"
                    .equals(
                        client
                            .resources(io.kipam.api.v1alpha1.IPPool.class)
                            .withName(full)
                            .get()
                            .getStatus()
                            .getAvailable()));
    // "Exhausted" (100) needs a count fresh for the question, newer than this node's last
    // allocation in the pool: kipam-operator renews the count of a pool with nothing free every
    // 10 s. Until then an ADD is told to try again, and a runtime does.
    Pod probe = Cluster.pod(client, namespace, "probe", node);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                CniCall.run(kipam, CniCall.env("ADD", "c-probe", probe), config("1.0.0", full))
                    .stdout()
                    .contains("\"code\":100,"));
  }

  @AfterAll
  static void stopDaemon() throws Exception {
    Close.all(rig);
  }

  private static String config(String version, String... pools) {
    return Cluster.config(version, daemon.socket.toString(), pools);
  }

  private static Map<String, String> addEnv() {
    return new HashMap<>(
        CniCall.env("ADD", "c-bad", "eth0", namespace, "victim", pod.getMetadata().getUid()));
  }

  private static String podArgs(String namespace, String name, String uid) {
    return "K8S_POD_NAMESPACE=" + namespace + ";K8S_POD_NAME=" + name + ";K8S_POD_UID=" + uid;
  }

  static Stream<Arguments> badCalls() {
    return Stream.of(
        bad("malformed JSON", e -> {}, () -> "{\"cniVersion\": \"1.0.0\", ", 6, "JSON"),
        bad("empty configuration", e -> {}, () -> "", 6, "empty"),
        bad(
            "no CNI_COMMAND",
            e -> e.remove("CNI_COMMAND"),
            () -> config("1.0.0", v4),
            4,
            "CNI_COMMAND"),
        bad(
            "unknown CNI_COMMAND",
            e -> e.put("CNI_COMMAND", "FROB"),
            () -> config("1.0.0", v4),
            4,
            "FROB"),
        bad(
            "no CNI_CONTAINERID",
            e -> e.remove("CNI_CONTAINERID"),
            () -> config("1.0.0", v4),
            4,
            "CNI_CONTAINERID"),
        bad(
            "container ID with a space",
            e -> e.put("CNI_CONTAINERID", "bad id"),
            () -> config("1.0.0", v4),
            4,
            "CNI_CONTAINERID"),
        bad(
            "no CNI_IFNAME",
            e -> e.remove("CNI_IFNAME"),
            () -> config("1.0.0", v4),
            4,
            "CNI_IFNAME"),
        bad(
            "interface name over 15 characters",
            e -> e.put("CNI_IFNAME", "averyverylongname"),
            () -> config("1.0.0", v4),
            4,
            "CNI_IFNAME"),
        bad(
            "no CNI_NETNS for ADD",
            e -> e.remove("CNI_NETNS"),
            () -> config("1.0.0", v4),
            4,
            "CNI_NETNS"),
        bad(
            "no K8S_POD_NAME",
            e -> e.put("CNI_ARGS", "K8S_POD_NAMESPACE=" + namespace),
            () -> config("1.0.0", v4),
            4,
            "K8S_POD_NAME"),
        bad(
            "pod unknown and no UID",
            e -> e.put("CNI_ARGS", "K8S_POD_NAMESPACE=" + namespace + ";K8S_POD_NAME=ghost"),
            () -> config("1.0.0", v4),
            11,
            "ghost"),
        bad(
            "container ID over 256 characters",
            e -> e.put("CNI_CONTAINERID", "c" + "x".repeat(299)),
            () -> config("1.0.0", v4),
            4,
            "CNI_CONTAINERID is 300 characters long"),
        bad(
            "pod UID of 40 characters",
            e -> e.put("CNI_ARGS", podArgs(namespace, "victim", "u".repeat(40))),
            () -> config("1.0.0", v4),
            4,
            "K8S_POD_UID"),
        bad(
            "pod namespace that is no namespace name",
            e ->
                e.put("CNI_ARGS", podArgs("Not_A_Namespace", "victim", pod.getMetadata().getUid())),
            () -> config("1.0.0", v4),
            4,
            "K8S_POD_NAMESPACE"),
        bad(
            "pod namespace that does not exist",
            e -> e.put("CNI_ARGS", podArgs("no-such-ns", "victim", pod.getMetadata().getUid())),
            () -> config("1.0.0", v4),
            11,
            "pod no-such-ns/victim does not exist"),
        bad(
            "pod UID that is not the pod's",
            e ->
                e.put(
                    "CNI_ARGS",
                    podArgs(namespace, "victim", "0f0f0f0f-0000-4000-8000-000000000000")),
            () -> config("1.0.0", v4),
            11,
            "not the K8S_POD_UID"),
        bad(
            "relative ipam.socket",
            e -> {},
            () -> config("1.0.0", v4).replace(daemon.socket.toString(), "run/kipam.sock"),
            7,
            "ipam.socket"),
        bad(
            "ipam.socket outside the directory kipam was installed with",
            e -> {},
            () ->
                config("1.0.0", v4)
                    .replace(daemon.socket.toString(), "/tmp/kipam-elsewhere/kipam.sock"),
            7,
            "ipam.socket '/tmp/kipam-elsewhere/kipam.sock' is not a path inside "
                + daemon.socket.getParent()),
        bad(
            "ipam.socket longer than a unix socket path may be",
            e -> {},
            () -> config("1.0.0", v4).replace(daemon.socket.toString(), "/" + "s".repeat(120)),
            7,
            "ipam.socket"),
        bad(
            "configuration nested 3000 deep",
            e -> {},
            () ->
                config("1.0.0", v4)
                    .replace("}}", "},\"deep\":" + "[".repeat(3000) + "]".repeat(3000) + "}"),
            6,
            "nested too deeply"),
        bad("unsupported cniVersion", e -> {}, () -> config("0.2.0", v4), 1, "0.2.0"),
        bad(
            "CHECK in CNI 0.3.1",
            e -> e.put("CNI_COMMAND", "CHECK"),
            () -> config("0.3.1", v4),
            1,
            "CHECK"),
        bad("GC in CNI 1.0.0", e -> e.put("CNI_COMMAND", "GC"), () -> config("1.0.0", v4), 1, "GC"),
        bad(
            "ipam of another type",
            e -> {},
            () -> config("1.0.0", v4).replace("\"type\":\"kipam\"", "\"type\":\"host-local\""),
            7,
            "ipam.type"),
        bad(
            "no ipam section",
            e -> {},
            () -> "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\"}",
            7,
            "ipam"),
        bad("no pools", e -> {}, () -> config("1.0.0"), 7, "ipam.pools"),
        bad("the same pool twice", e -> {}, () -> config("1.0.0", v4, v4), 7, "ipam.pools"),
        bad(
            "a pool name that is no DNS label",
            e -> {},
            () -> config("1.0.0", "Bad_Pool"),
            7,
            "ipam.pools"),
        bad("unknown pool", e -> {}, () -> config("1.0.0", "no-such-pool"), 101, "no-such-pool"),
        bad("pool not Ready", e -> {}, () -> config("1.0.0", notReady), 101, "is not Ready"),
        bad("exhausted pool", e -> {}, () -> config("1.0.0", full), 100, "is exhausted"),
        bad(
            "configuration over 1 MiB",
            e -> {},
            () -> config("1.0.0", v4).replace("}}", "},\"pad\":\"" + "x".repeat(1 << 20) + "\"}"),
            7,
            "1048576"));
  }

  private static Arguments bad(
      String description,
      Consumer<Map<String, String>> env,
      java.util.function.Supplier<String> stdin,
      int code,
      String fragment) {
    return Arguments.of(description, env, stdin, code, fragment);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("badCalls")
  void badInputIsACniErrorNamingTheProblemAndAllocatesNothing(
      String description,
      Consumer<Map<String, String>> breakEnv,
      java.util.function.Supplier<String> stdin,
      int code,
      String fragment) {
    int blocksBefore = client.resources(IPBlock.class).list().getItems().size();
    Map<String, String> env = addEnv();
    breakEnv.accept(env);

    CniCall.Outcome outcome = CniCall.run(kipam, env, stdin.get());

    assertThat(outcome.exit()).as(outcome.stdout()).isEqualTo(1);
    assertThat(outcome.stdout()).contains("\"code\":" + code + ",").contains(fragment);
    assertThat(
            client.resources(IPAddress.class).inNamespace(namespace).list().getItems().stream()
                .filter(a -> a.getSpec().getPod().getName().equals("victim")))
        .as("nothing allocated")
        .isEmpty();
    assertThat(client.resources(IPBlock.class).list().getItems()).hasSize(blocksBefore);
  }

  @Test
  void aDaemonThatHasNotSyncedHandsOutNothing() throws Exception {
    String lateNode = Fixtures.uniqueName("late");
    Fixtures.registerNode(client, lateNode);
    Pod latePod = Cluster.pod(client, namespace, "late", lateNode);
    DaemonProcess late = new DaemonProcess(dir, lateNode, controlPlane.adminKubeconfig());
    Path lateKipam = Installer.install(dir.resolve("bin-late"), late.socket);
    String config = Cluster.config("1.1.0", late.socket.toString(), v4);
    Map<String, String> add =
        CniCall.env("ADD", "c-late", "eth0", namespace, "late", latePod.getMetadata().getUid());
    controlPlane.stopApiServer();
    try {
      late.start();
      // It answers, but as a daemon that has not read its node's allocations yet.
      CniCall.Outcome status =
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () -> CniCall.run(lateKipam, Map.of("CNI_COMMAND", "STATUS"), config),
                  o -> o.stdout().contains("is not ready"));
      assertThat(status.stdout()).contains("\"code\":50,");
      CniCall.Outcome early = CniCall.run(lateKipam, add, config);
      assertThat(early.exit()).isEqualTo(1);
      assertThat(early.stdout()).contains("\"code\":11,").contains("still reading its allocations");
    } finally {
      controlPlane.startApiServer();
    }
    try {
      await()
          .atMost(Duration.ofSeconds(120))
          .untilAsserted(() -> assertThat(CniCall.run(lateKipam, add, config).ok()).isTrue());
    } finally {
      late.close();
    }
  }

  @Test
  void addWithTheApiServerDownIsTryAgainLaterAndSucceedsOnceItIsBack() {
    Pod later = Cluster.pod(client, namespace, "api-down", node);
    Map<String, String> env =
        CniCall.env(
            "ADD", "c-api-down", "eth0", namespace, "api-down", later.getMetadata().getUid());
    controlPlane.stopApiServer();
    CniCall.Outcome down;
    try {
      down = CniCall.run(kipam, env, config("1.0.0", v4));
    } finally {
      controlPlane.startApiServer();
    }

    assertThat(down.exit()).isEqualTo(1);
    assertThat(down.stdout()).contains("\"code\":11,").contains("Kubernetes API is unavailable");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> assertThat(CniCall.run(kipam, env, config("1.0.0", v4)).ok()).isTrue());
    assertThat(client.resources(IPAddress.class).inNamespace(namespace).list().getItems())
        .filteredOn(a -> a.getSpec().getPod().getName().equals("api-down"))
        .hasSize(1);
  }
}
