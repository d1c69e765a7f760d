package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** kipam-node and the kipam executable against the real control plane, one call at a time. */
class NodeDaemonIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static NodeUnderTest rig;
  private static Path kipam;
  private static DaemonProcess daemon;
  private static String node;
  private static String pool;
  private static String singleAddressPool;
  private static String v6Pool;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final String namespace = Fixtures.namespace(client, "node-it");

  @BeforeAll
  static void startDaemon(ControlPlane controlPlane, KubernetesClient client) throws Exception {
    rig = NodeUnderTest.register(client, "kipam-node-it", "node");
    node = rig.node;
    pool = Cluster.readiedPool(client, "pods", Cluster.spec("10.231.0.0/24", 28, 0));
    singleAddressPool = Fixtures.uniqueName("one");
    Cluster.poolReadiedByOperator(
        client, singleAddressPool, Cluster.oneAddressSpec("10.232.0.0/24", "10.232.0.9", 3));
    v6Pool = Cluster.readiedPool(client, "pods6", Cluster.spec("fd00:10:231::/64", 120, 0));
    daemon = rig.start(controlPlane.adminKubeconfig(), pool);
    kipam = rig.kipam;
  }

  @AfterAll
  static void stopDaemon() throws Exception {
    Close.all(rig);
  }

  /** One call with {@code env} as given, for {@code pool}, in CNI version {@code cniVersion}. */
  private CniCall.Outcome callWithEnv(Map<String, String> env, String cniVersion) {
    return CniCall.run(kipam, env, Cluster.config(cniVersion, daemon.socket.toString(), pool));
  }

  private CniCall.Outcome call(String command, Pod pod, String containerId, String... pools) {
    return CniCall.run(
        kipam,
        CniCall.env(command, containerId, pod),
        Cluster.config("1.0.0", daemon.socket.toString(), pools));
  }

  private List<IPAddress> addresses() {
    return client.resources(IPAddress.class).inNamespace(namespace).list().getItems();
  }

  @Test
  void addGivesAnAddressOfThePoolHeldByAnIPAddressOwnedByThePod() throws Exception {
    Pod pod = Cluster.pod(client, namespace, "web-0", node);

    String ip = call("ADD", pod, "c-web-0", pool).ip();

    assertThat(ip).startsWith("10.231.0.");
    IPAddress address =
        client
            .resources(IPAddress.class)
            .inNamespace(namespace)
            .withName(ResourceNames.addressName(pool, IpAddress.parse(ip)))
            .get();
    assertThat(address.getSpec().getPod().getUid()).isEqualTo(pod.getMetadata().getUid());
    assertThat(address.getSpec().getNode()).isEqualTo(node);
    assertThat(address.getMetadata().getLabels()).containsEntry(ApiConstants.LABEL_NODE, node);
    assertThat(address.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Pod");
              assertThat(o.getUid()).isEqualTo(pod.getMetadata().getUid());
              assertThat(o.getBlockOwnerDeletion()).isFalse();
            });
  }

  @Test
  void dualStackAddGivesOneAddressOfEachFamily() throws Exception {
    Pod pod = Cluster.pod(client, namespace, "dual", node);

    CniCall.Outcome outcome = call("ADD", pod, "c-dual", pool, v6Pool);

    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    JsonNode ips = JSON.readTree(outcome.stdout()).path("ips");
    assertThat(ips).hasSize(2);
    assertThat(ips.get(0).path("address").asText()).startsWith("10.231.0.").endsWith("/24");
    assertThat(ips.get(1).path("address").asText()).startsWith("fd00:10:231:").endsWith("/64");
    assertThat(addresses()).hasSize(2);
    assertThat(call("DEL", pod, "c-dual", pool, v6Pool).ok()).isTrue();
    assertThat(addresses()).isEmpty();
  }

  @Test
  void olderCniVersionsGetTheirOwnResultFormat() throws Exception {
    Pod pod = Cluster.pod(client, namespace, "old-runtime", node);
    var env =
        CniCall.env("ADD", "c-old", "eth0", namespace, "old-runtime", pod.getMetadata().getUid());

    CniCall.Outcome outcome = callWithEnv(env, "0.3.1");

    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    JsonNode result = JSON.readTree(outcome.stdout());
    assertThat(result.path("cniVersion").asText()).isEqualTo("0.3.1");
    assertThat(result.path("ips").get(0).path("version").asText()).isEqualTo("4");
    env.put("CNI_COMMAND", "DEL");
    assertThat(callWithEnv(env, "0.3.1").ok()).isTrue();
  }

  @Test
  void withoutK8sPodUidTheOwnerComesFromTheNodesPodWatch() throws Exception {
    Pod pod = Cluster.pod(client, namespace, "no-uid", node);
    var env = CniCall.env("ADD", "c-no-uid", "eth0", namespace, "no-uid", null);

    CniCall.Outcome outcome =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> callWithEnv(env, "1.0.0"), CniCall.Outcome::ok);

    assertThat(outcome.stdout()).contains("10.231.0.");
    assertThat(addresses())
        .filteredOn(a -> a.getSpec().getPod().getName().equals("no-uid"))
        .singleElement()
        .satisfies(
            a ->
                assertThat(a.getMetadata().getOwnerReferences().get(0).getUid())
                    .isEqualTo(pod.getMetadata().getUid()));
    env.put("CNI_COMMAND", "DEL");
    assertThat(callWithEnv(env, "1.0.0").ok()).isTrue();
  }

  @Test
  void addIsIdempotentAndDelSucceedsWhateverIsLeft() throws Exception {
    Pod pod = Cluster.pod(client, namespace, "idem", node);
    String first = call("ADD", pod, "c-idem", pool).ip();

    assertThat(call("ADD", pod, "c-idem", pool).ip()).isEqualTo(first);
    assertThat(addresses()).hasSize(1);

    for (int i = 0; i < 3; i++) {
      assertThat(call("DEL", pod, "c-idem", pool).ok()).isTrue();
    }
    assertThat(call("DEL", pod, "c-never-added", pool).ok()).isTrue();
    assertThat(addresses()).isEmpty();

    String again = call("ADD", pod, "c-idem-2", pool).ip();
    client.resources(IPAddress.class).inNamespace(namespace).delete();
    // Deleted while its pod lives: it stays, Terminating, and keeps the address until the DEL.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                addresses().size() == 1
                    && addresses().get(0).getMetadata().getDeletionTimestamp() != null);
    assertThat(call("DEL", pod, "c-idem-2", pool).ok())
        .as("DEL after its IPAddress was deleted")
        .isTrue();
    assertThat(addresses()).isEmpty();
    assertThat(again).isNotNull();
  }

  /**
   * ADD of {@code pod} to the pool of one address, tried again for up to 30 s while another test's
   * release of that address rests; the address.
   */
  private String addOnceFree(Pod pod, String containerId) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> call("ADD", pod, containerId, singleAddressPool), CniCall.Outcome::ok)
        .ip();
  }

  @Test
  void staleDelNeverRemovesAnAddressReissuedToAnotherPod() throws Exception {
    Pod first = Cluster.pod(client, namespace, "first", node);
    Pod second = Cluster.pod(client, namespace, "second", node);
    String ip = addOnceFree(first, "c-first");
    assertThat(call("DEL", first, "c-first", singleAddressPool).ok()).isTrue();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(call("ADD", second, "c-second", singleAddressPool).ip()).isEqualTo(ip));

    assertThat(call("DEL", first, "c-first", singleAddressPool).ok()).isTrue();

    assertThat(addresses())
        .singleElement()
        .satisfies(a -> assertThat(a.getSpec().getPod().getName()).isEqualTo("second"));
    assertThat(call("DEL", second, "c-second", singleAddressPool).ok()).isTrue();
  }

  @Test
  void deletingThePodReturnsItsAddressAfterTheReuseDelay() throws Exception {
    Pod owner = Cluster.pod(client, namespace, "gc-owner", node);
    // Another test may have just released the pool's one address; it rests for 3s.
    String ip = addOnceFree(owner, "c-gc-owner");

    client.pods().inNamespace(namespace).withName("gc-owner").withGracePeriod(0).delete();
    await().atMost(Duration.ofSeconds(90)).until(() -> addresses().isEmpty());

    Pod next = Cluster.pod(client, namespace, "gc-next", node);
    CniCall.Outcome early = call("ADD", next, "c-gc-next", singleAddressPool);
    assertThat(early.exit()).as("the address rests for 3s after release").isEqualTo(1);
    // "Exhausted" until kipam-operator has counted the address free, "try again" from then on.
    assertThat(early.stdout())
        .containsAnyOf("\"code\":100,", "\"code\":11,")
        .contains(singleAddressPool);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat(call("ADD", next, "c-gc-next", singleAddressPool).ip()).isEqualTo(ip));
    assertThat(call("DEL", next, "c-gc-next", singleAddressPool).ok()).isTrue();
  }
}
