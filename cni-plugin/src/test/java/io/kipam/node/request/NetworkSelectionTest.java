package io.kipam.node.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class NetworkSelectionTest {

  @Test
  void theJsonFormNamesTheClaimOfTheElementWhoseInterfaceIsTheCalls() throws Exception {
    String annotation =
        "[{\"name\":\"storage\"},"
            + "{\"name\":\"tenant\",\"namespace\":\"vms\",\"interface\":\"pod16367aacb67\","
            + "\"ipam-claim-reference\":\"vm-a.tenant\"}]";

    assertThat(NetworkSelection.forInterface(annotation, "pod16367aacb67"))
        .contains(new NetworkSelection.Element("tenant", "vms", "pod16367aacb67", "vm-a.tenant"));
    assertThat(NetworkSelection.forInterface(annotation, "net1"))
        .contains(new NetworkSelection.Element("storage", null, "net1", null));
    assertThat(NetworkSelection.forInterface(annotation, "eth0")).isEmpty();
  }

  @Test
  void anElementWithoutInterfaceGetsTheNameMultusGivesIt() throws Exception {
    String annotation =
        "[{\"name\":\"a\"},{\"name\":\"b\",\"ipam-claim-reference\":\"web-1.b\"},{\"name\":\"c\"}]";

    assertThat(NetworkSelection.parse(annotation))
        .extracting(NetworkSelection.Element::ifName)
        .containsExactly("net1", "net2", "net3");
    assertThat(NetworkSelection.forInterface(annotation, "net2").orElseThrow().claim())
        .isEqualTo("web-1.b");
  }

  @Test
  void theShortFormNamesNoClaim() throws Exception {
    assertThat(NetworkSelection.parse(" vms/tenant@eth1, storage "))
        .containsExactly(
            new NetworkSelection.Element("tenant", "vms", "eth1", null),
            new NetworkSelection.Element("storage", null, "net2", null));
    assertThat(NetworkSelection.parse(null)).isEmpty();
    assertThat(NetworkSelection.parse("  ")).isEmpty();
  }

  @Test
  void aMalformedAnnotationIsRefusedNamingTheAnnotationAndWhatIsWrong() {
    assertThatThrownBy(() -> NetworkSelection.parse("[{\"name\":"))
        .isInstanceOf(NetworkSelection.MalformedException.class)
        .hasMessageContaining("k8s.v1.cni.cncf.io/networks")
        .hasMessageContaining("not a JSON list");
    assertThatThrownBy(() -> NetworkSelection.parse("[\"tenant\"]"))
        .hasMessageContaining("element 0 must be an object");
    assertThatThrownBy(() -> NetworkSelection.parse("[{\"interface\":\"net1\"}]"))
        .hasMessageContaining("element 0 has no name");
    assertThatThrownBy(
            () -> NetworkSelection.parse("[{\"name\":\"t\",\"ipam-claim-reference\":7}]"))
        .hasMessageContaining("ipam-claim-reference must be a string");
    assertThatThrownBy(() -> NetworkSelection.parse("a,,b"))
        .hasMessageContaining("empty element at position 1");
    assertThatThrownBy(() -> NetworkSelection.parse("ns/@eth1"))
        .hasMessageContaining("names no network");
  }
}
