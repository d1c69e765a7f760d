package io.kipam.node.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.PoolLayout;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.alloc.Refusal;
import io.kipam.node.kube.MapPoolDirectory;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PodSummary;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which pools an interface's annotations may choose: only pools of the interface's network (design
 * §5c). Red and blue are two Multus networks whose pools overlap; the primary network's pools have
 * no {@code spec.network}. Pods are in three namespaces, each with its own annotations.
 */
class PoolChoiceTest {

  private final Map<String, PoolView> pools = new HashMap<>();
  private final Map<String, Map<String, String>> namespaces = new HashMap<>();
  private final PoolChoice choice = new PoolChoice(new Directory());

  PoolChoiceTest() {
    pool("pods-v4", "10.244.0.0/16", PoolView.PRIMARY);
    pool("pods-v6", "fd00:244::/64", PoolView.PRIMARY);
    pool("special-v4", "10.245.0.0/16", PoolView.PRIMARY);
    pool("blue-a", "192.168.0.0/24", "blue");
    pool("blue-b", "192.168.1.0/24", "blue");
    pool("red-a", "192.168.0.0/24", "red");
    pool("red-v6", "fd00:ed::/64", "red");
  }

  private void pool(String name, String cidr, String network) {
    pools.put(
        name,
        new PoolView(name, PoolLayout.builder().cidr(cidr).build(), Duration.ofSeconds(30), 0)
            .withNetwork(network));
  }

  private final class Directory extends MapPoolDirectory {
    Directory() {
      super(pools, namespaces);
    }

    @Override
    public PoolView pool(String name, String namespace) throws NodeWatch.PoolNotUsableException {
      PoolView pool = pools.get(name);
      if (pool == null) {
        throw new NodeWatch.PoolNotUsableException("IPPool " + name + " does not exist");
      }
      return pool;
    }
  }

  private static NodeWatch.Owner pod(String namespace, Map<String, String> annotations) {
    PodSummary pod = new PodSummary();
    pod.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace(namespace)
            .withName("web")
            .withUid("uid-" + namespace)
            .withAnnotations(annotations)
            .build());
    return new NodeWatch.Owner(new PodRef(namespace, "web", "uid-" + namespace), pod);
  }

  /** The pool names each family of an interface configured with {@code configured} gets. */
  private List<List<String>> chosen(
      List<String> configured, String namespace, Map<String, String> onPod) throws Exception {
    String network = choice.network(configured, "conf");
    var byFamily = choice.configured(configured, namespace);
    return choice.choose(byFamily, namespace, pod(namespace, onPod), network).stream()
        .map(f -> f.stream().map(PoolView::name).toList())
        .toList();
  }

  @Test
  void anAnnotationChoosesAmongPoolsOfTheInterfacesNetworkOnly() throws Exception {
    Map<String, String> redOnBlue = Map.of(ApiConstants.ANNOTATION_POOLS, "red-a");
    assertThat(chosen(List.of("blue-a"), "ns-a", redOnBlue))
        .as("a red pool named on a pod does not reach its blue interface")
        .containsExactly(List.of("blue-a"));
    assertThat(chosen(List.of("red-a"), "ns-a", redOnBlue))
        .as("but it chooses for the red interface")
        .containsExactly(List.of("red-a"));
    assertThat(chosen(List.of("blue-a"), "ns-b", Map.of(ApiConstants.ANNOTATION_POOLS, "blue-b")))
        .containsExactly(List.of("blue-b"));
    assertThat(
            chosen(
                List.of("blue-a"),
                "ns-c",
                Map.of(ApiConstants.ANNOTATION_POOLS, "[\"red-a\", \"blue-b\", \"special-v4\"]")))
        .as("of a list naming pools of three networks, the interface's network's")
        .containsExactly(List.of("blue-b"));
  }

  @Test
  void aNamespaceAnnotationForThePrimaryNetworkLeavesSecondaryInterfacesAlone() throws Exception {
    namespaces.put("ns-a", Map.of(ApiConstants.ANNOTATION_POOLS, "special-v4"));
    namespaces.put("ns-b", Map.of(ApiConstants.ANNOTATION_IPV4_POOLS, "special-v4"));
    for (String namespace : List.of("ns-a", "ns-b")) {
      assertThat(chosen(List.of("pods-v4"), namespace, Map.of()))
          .containsExactly(List.of("special-v4"));
      assertThat(chosen(List.of("blue-a"), namespace, Map.of()))
          .as("net1 of " + namespace)
          .containsExactly(List.of("blue-a"));
    }
    Map<String, String> v4 = Map.of(ApiConstants.ANNOTATION_IPV4_POOLS, "special-v4");
    assertThat(chosen(List.of("red-a", "red-v6"), "ns-c", v4))
        .as("kipam.io/ipv4-pools of the primary network on a pod: not for its red interface")
        .containsExactly(List.of("red-a"), List.of("red-v6"));
    assertThat(chosen(List.of("pods-v4", "pods-v6"), "ns-c", v4))
        .containsExactly(List.of("special-v4"), List.of("pods-v6"));
  }

  @Test
  void aConfigurationWithPoolsOfTwoNetworksIsRefusedNamingThem() {
    assertThatThrownBy(() -> choice.network(List.of("blue-a", "red-v6"), "storage"))
        .isInstanceOfSatisfying(
            Refusal.class, r -> assertThat(r.kind()).isEqualTo(Refusal.Kind.INVALID_CONFIG))
        .hasMessageContaining("network configuration storage names pools of different networks")
        .hasMessageContaining("blue-a (network blue)")
        .hasMessageContaining("red-v6 (network red)");
    assertThat(choice.network(List.of("pods-v4", "pods-v6"), "pods")).isEqualTo(PoolView.PRIMARY);
    assertThat(choice.network(List.of("red-a", "red-v6"), "red")).isEqualTo("red");
  }

  @Test
  void anUnknownPoolNamedForTheInterfaceIsStillRefused() {
    assertThatThrownBy(
            () -> chosen(List.of("blue-a"), "ns-a", Map.of(ApiConstants.ANNOTATION_POOLS, "nope")))
        .isInstanceOfSatisfying(
            Refusal.class, r -> assertThat(r.kind()).isEqualTo(Refusal.Kind.POOL_NOT_AVAILABLE))
        .hasMessageContaining("names pool nope")
        .hasMessageContaining("does not exist");
  }
}
