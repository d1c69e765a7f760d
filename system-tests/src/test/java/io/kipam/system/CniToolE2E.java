package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.CnitoolRuntime;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.Exec;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kipam as a real CNI client uses it: the reference {@code cnitool} runs the reference {@code
 * bridge} plugin, which delegates IPAM to the installed {@code kipam} executable, in network
 * namespaces this test creates (the bridge lives in a "host" namespace of the test's own, so the
 * machine's network is untouched and no traffic is sent anywhere).
 */
class CniToolE2E {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client = ControlPlane.shared().client();
  private DaemonProcess daemon;
  private CnitoolRuntime runtime;
  private Path kipam;
  private String pool;
  private String k8sNamespace;

  @BeforeEach
  void setUp() throws Exception {
    NodeUnderTest node = NodeUnderTest.register(client, "kipam-e2e", "e2e-node");
    daemon = node.launch(ControlPlane.shared().adminKubeconfig());
    kipam = node.kipam;
    pool = Cluster.poolWithGateway(client, "e2e", "10.252.0.0/24", "10.252.0.1");
    k8sNamespace = Fixtures.namespace(client, "e2e");
    runtime = new CnitoolRuntime(node.dir, "kipam-e2e", "kipbr0", kipam, daemon.socket, pool);
    await().atMost(Duration.ofSeconds(90)).until(() -> runtime.status().exit() == 0);
  }

  @AfterEach
  void tearDown() throws Exception {
    Close.all(daemon, runtime);
  }

  private List<IPAddress> addresses() {
    return client.resources(IPAddress.class).inNamespace(k8sNamespace).list().getItems();
  }

  @Test
  void bridgeGivesThePodTheAddressKipamAllocatedAndDelReleasesIt() throws Exception {
    String podNs = runtime.netns("pod");
    Pod pod = Cluster.pod(client, k8sNamespace, "e2e-web", daemon.node);

    Exec.Result added = runtime.add(podNs, pod).orFail();

    JsonNode result = JSON.readTree(added.stdout());
    String address = result.path("ips").get(0).path("address").asText();
    assertThat(address).startsWith("10.252.0.").endsWith("/24");
    assertThat(addresses())
        .singleElement()
        .satisfies(a -> assertThat(a.getSpec().getIp()).isEqualTo(address.split("/")[0]));
    String inside = CnitoolRuntime.addressesInside(podNs);
    assertThat(inside).contains("inet " + address);
    System.out.println("cnitool add: " + added.stdout().strip() + "\npod netns: " + inside.strip());

    runtime.del(podNs, pod).orFail();

    await().atMost(Duration.ofSeconds(30)).until(() -> addresses().isEmpty());
  }

  @Test
  void statusIsReadyOnlyWhileTheDaemonIs() throws Exception {
    assertThat(runtime.status().exit()).isZero();

    daemon.close();
    Exec.Result down = runtime.status();
    assertThat(down.exit()).isNotZero();
    System.out.println(
        "cnitool status with kipam-node stopped: " + down.stderr().strip() + down.stdout().strip());

    daemon.start();
    await().atMost(Duration.ofSeconds(90)).until(() -> runtime.status().exit() == 0);
  }

  @Test
  void gcReleasesOnlyTheAttachmentsNotInTheValidList() throws Exception {
    Pod keep = Cluster.pod(client, k8sNamespace, "keep", daemon.node);
    Pod drop = Cluster.pod(client, k8sNamespace, "drop", daemon.node);
    String config =
        "{\"cniVersion\":\"1.1.0\",\"name\":\"kipam-e2e\",\"type\":\"bridge\",\"ipam\":{\"type\":\"kipam\","
            + "\"pools\":[\""
            + pool
            + "\"],\"socket\":\""
            + daemon.socket
            + "\"}}";
    for (Pod p : List.of(keep, drop)) {
      var env = CniCall.env("ADD", "c-" + p.getMetadata().getName(), p);
      assertThat(CniCall.run(kipam, env, config).ok()).isTrue();
    }
    assertThat(addresses()).hasSize(2);
    Thread.sleep(2500); // the daemon's GC grace period in tests is 2s

    // Exactly what libcni sends for GC: the configuration plus the list of attachments in use.
    String gc =
        config.substring(0, config.length() - 1)
            + ",\"cni.dev/valid-attachments\":[{\"containerID\":\"c-keep\",\"ifname\":\"eth0\"}]}";
    CniCall.Outcome outcome =
        CniCall.run(kipam, Map.of("CNI_COMMAND", "GC", "CNI_PATH", "/opt/cni/bin"), gc);

    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(addresses())
                    .singleElement()
                    .satisfies(a -> assertThat(a.getSpec().getPod().getName()).isEqualTo("keep")));
  }
}
