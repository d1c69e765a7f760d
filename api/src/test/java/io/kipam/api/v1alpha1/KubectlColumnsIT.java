package io.kipam.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What an operator sees with kubectl: "who has which IP" at a glance. */
@WithControlPlane(crds = true)
class KubectlColumnsIT {

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = controlPlane.client();

  @Test
  void getIpaddressesShowsIpPoolPodClaimNodeAndAge() {
    String ns = Fixtures.namespace(client, "columns");
    IPAddress claimed = address(ns, "10.244.0.10", "web-0", "node-a");
    claimed.getSpec().setClaim("web-0.tenant");
    IPAddress first = client.resource(claimed).create();
    client.resource(address(ns, "10.244.0.11", "web-1", "node-b")).create();

    String table = controlPlane.kubectl("get", "ipaddresses.kipam.io", "-A");
    System.out.println("kubectl get ipaddresses.kipam.io -A\n" + table);
    List<String> lines = table.lines().toList();

    assertThat(columns(lines.get(0)))
        .containsExactly("NAMESPACE", "NAME", "IP", "POOL", "POD", "CLAIM", "NODE", "AGE");
    List<String> row =
        lines.stream()
            .map(KubectlColumnsIT::columns)
            .filter(c -> c.get(1).equals(first.getMetadata().getName()))
            .findFirst()
            .orElseThrow();
    assertThat(row.subList(0, 7))
        .containsExactly(
            ns, "pods-v4.10-244-0-10", "10.244.0.10", "pods-v4", "web-0", "web-0.tenant", "node-a");
    assertThat(row.get(7)).matches("\\d+[smhd].*");
    List<String> unclaimed =
        lines.stream()
            .map(KubectlColumnsIT::columns)
            .filter(c -> c.get(1).equals("pods-v4.10-244-0-11"))
            .findFirst()
            .orElseThrow();
    // No claim: kubectl leaves the column blank.
    assertThat(unclaimed.subList(4, 6)).containsExactly("web-1", "node-b");
  }

  @Test
  void shortNameAndCategoryListTheAddresses() {
    String ns = Fixtures.namespace(client, "short-names");
    client.resource(address(ns, "10.244.0.12", "db-0", "node-a")).create();

    assertThat(controlPlane.kubectl("get", "kipaddr", "-n", ns)).contains("10.244.0.12");
    assertThat(controlPlane.kubectl("get", "kipam", "-n", ns, "-o", "name"))
        .contains("ipaddress.kipam.io/pods-v4.10-244-0-12");
  }

  @Test
  void explainDescribesPoolFields() {
    String explained = controlPlane.kubectl("explain", "ippools.kipam.io.spec.blockSize");
    assertThat(explained).contains("Prefix length of the blocks nodes lease from this pool");
  }

  private static List<String> columns(String line) {
    return Arrays.asList(line.trim().split("\\s{2,}"));
  }

  private static IPAddress address(String namespace, String ip, String pod, String node) {
    IPAddress address = new IPAddress();
    String name = ResourceNames.addressName("pods-v4", IpAddress.parse(ip));
    address.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(Map.of(ApiConstants.LABEL_POOL, "pods-v4", ApiConstants.LABEL_NODE, node))
            .build());
    PodReference owner =
        new PodReference(
            pod, "6f1c2a8e-0000-4000-8000-" + String.format("%012d", ip.hashCode() & 0xffffff));
    address.setSpec(TestAddresses.spec("pods-v4", "10.244.0.0/26", ip, node, owner, 'a'));
    return address;
  }
}
