package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CnitoolRuntime;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.Exec;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kipam as the IPAM of a Multus delegate, driven the way Multus drives one: the reference {@code
 * bridge} plugin with kipam as its IPAM, called through the reference {@code cnitool} in network
 * namespaces this test creates. The plugin declares the {@code ips} capability; what Multus takes
 * from a pod's network-selection element ({@code "ips"}) the test passes as {@code CAP_ARGS}, which
 * libcni turns into {@code runtimeConfig.ips} exactly as for Multus; {@code ipam-claim-reference}
 * kipam reads from the pod's annotation itself. (Multus itself cannot be built here: its Go module
 * is not served; docs/user-guide.md says which of its behaviours this reproduces.)
 */
class MultusDelegateE2E {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NETWORK = "kipam-multus";
  private static final String SELECTION = "k8s.v1.cni.cncf.io/networks";

  private final KubernetesClient client = ControlPlane.shared().client();
  private DaemonProcess daemon;
  private CnitoolRuntime runtime;
  private NodeUnderTest node;
  private String k8sNamespace;

  @BeforeEach
  void setUp() throws Exception {
    KipamCrds.installIpamClaims(client);
    node = NodeUnderTest.register(client, "kipam-multus", "multus-node");
    daemon = node.launch(ControlPlane.shared().adminKubeconfig());
    String pool = Cluster.poolWithGateway(client, "multus", "10.253.0.0/24", "10.253.0.1");
    k8sNamespace = Fixtures.namespace(client, "multus");
    runtime =
        new CnitoolRuntime(
            node.dir,
            NETWORK,
            "kipmbr0",
            node.kipam,
            daemon.socket,
            pool,
            "\"capabilities\":{\"ips\":true},\"allowPersistentIPs\":true");
    await().atMost(Duration.ofSeconds(90)).until(() -> runtime.status().exit() == 0);
  }

  @AfterEach
  void tearDown() throws Exception {
    Close.all(daemon, runtime);
  }

  @Test
  void aStaticAddressFromTheNetworkSelectionElementReachesThePod() throws Exception {
    // CAP_ARGS as a runtime passes it, and as Multus makes it from the element's "ips".
    String podNs = runtime.netns("pod");
    Pod pod =
        pod(
            "static-1",
            "[{\"name\":\""
                + NETWORK
                + "\",\"interface\":\"eth0\","
                + "\"ips\":[\"10.253.0.78/24\"]}]");
    JsonNode element = JSON.readTree(pod.getMetadata().getAnnotations().get(SELECTION)).get(0);
    String capArgs = "{\"ips\":" + element.get("ips") + "}";
    Exec.Result added = runtime.add(podNs, pod, capArgs).orFail();
    assertThat(address(added)).isEqualTo("10.253.0.78/24");
    assertThat(CnitoolRuntime.addressesInside(podNs)).contains("inet 10.253.0.78/24");
    System.out.println(
        "CAP_ARGS " + capArgs + ": pod netns " + CnitoolRuntime.addressesInside(podNs).strip());
    runtime.del(podNs, pod).orFail();
    await().atMost(Duration.ofSeconds(30)).until(() -> addresses(pod).isEmpty());
  }

  @Test
  void anIpamClaimOfTheNetworkSelectionElementKeepsItsAddressForTheNextPod() throws Exception {
    IPAMClaim claim = new IPAMClaim();
    claim.getMetadata().setName("vm-m." + NETWORK);
    claim.getMetadata().setNamespace(k8sNamespace);
    claim.setSpec(new IPAMClaimSpec(NETWORK, "eth0"));
    client.resource(claim).create();
    String selection =
        "[{\"name\":\""
            + NETWORK
            + "\",\"interface\":\"eth0\",\"ipam-claim-reference\":\"vm-m."
            + NETWORK
            + "\"}]";

    String firstNs = runtime.netns("pod");
    Pod first = pod("vm-m-1", selection);
    String address = address(runtime.add(firstNs, first).orFail());
    assertThat(CnitoolRuntime.addressesInside(firstNs)).contains("inet " + address);
    runtime.del(firstNs, first).orFail();
    client.resource(first).withGracePeriod(0).delete();

    String secondNs = runtime.netns("pod");
    Pod second = pod("vm-m-2", selection);
    assertThat(address(runtime.add(secondNs, second).orFail())).isEqualTo(address);
    assertThat(CnitoolRuntime.addressesInside(secondNs)).contains("inet " + address);
    System.out.println("IPAMClaim vm-m." + NETWORK + " kept " + address + " for the next pod");
    runtime.del(secondNs, second).orFail();
  }

  private Pod pod(String name, String selection) {
    return Cluster.annotatedPod(
        client, k8sNamespace, name, daemon.node, Map.of(SELECTION, selection));
  }

  private static String address(Exec.Result added) throws Exception {
    return JSON.readTree(added.stdout()).path("ips").get(0).path("address").asText();
  }

  private List<IPAddress> addresses(Pod pod) {
    return client.resources(IPAddress.class).inNamespace(k8sNamespace).list().getItems().stream()
        .filter(a -> pod.getMetadata().getName().equals(a.getSpec().getPod().getName()))
        .toList();
  }
}
