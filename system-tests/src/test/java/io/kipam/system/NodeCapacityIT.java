package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * kube-scheduler places pods by the {@code kipam.io/ip} kipam-operator publishes on Nodes. A
 * control plane of this test's own (no other test's Nodes or pools), kipam-operator as its own
 * process, two registered Nodes and a pool of 6 addresses whose nodeSelector matches only node A;
 * pods in three namespaces request {@code kipam.io/ip: 1} and have no nodeName: kube-scheduler
 * binds them.
 */
class NodeCapacityIT {

  private static final String RESOURCE = "kipam.io/ip";
  private static final String LABEL = "example.com/secondary-network";

  /** The label value of this variant's nodes: the pools of other variants select none of them. */
  private static String selected;

  private static final Duration WITHIN = Duration.ofSeconds(60);

  private static ControlPlane controlPlane;
  private static KubernetesClient client;
  private static KipamProcesses processes;
  private static int subnets;

  @BeforeAll
  static void startCluster() throws Exception {
    controlPlane = ControlPlane.fresh();
    client = controlPlane.client();
    KipamCrds.install(client);
    processes = new KipamProcesses(controlPlane, client, "capacity");
  }

  @AfterAll
  static void stopCluster() throws Exception {
    Close.all(processes, controlPlane);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#capacity")
  void theSchedulerPlacesPodsWhereThePoolHasAddressesAndNowhereElse(Map<String, String> capacity)
      throws Exception {
    // An operator of this variant's only: stopped after it, so that none is left leading.
    try (OperatorProcess operator = processes.leadingOperator(capacity, WITHIN)) {
      System.out.printf(
          "kipam.io/ip brought up to date every %s%n", operator.settings().capacityInterval());
      String a = Fixtures.uniqueName("node-a");
      String b = Fixtures.uniqueName("node-b");
      try {
        placesPods(a, b);
      } finally {
        // Gone with the variant: the pods of a later one have no nodeName and could land here.
        client.nodes().withName(a).delete();
        client.nodes().withName(b).delete();
      }
    }
  }

  private void placesPods(String a, String b) throws Exception {
    selected = Fixtures.uniqueName("yes");
    register(a, true);
    register(b, false);
    // A pool of this variant's own: pools of one network may not overlap.
    IPPoolSpec spec = Cluster.spec("10.211." + subnets++ + ".0/29", 29, 0);
    spec.setNodeSelector(Cluster.matchLabel(LABEL, selected));
    // The default network, whose resource is kipam.io/ip.
    Cluster.poolOnItsNetworkReadiedByOperator(client, Fixtures.uniqueName("capacity"), spec);
    awaitValue(a, 6, "the pool's 6 assignable addresses on node A");
    awaitValue(b, 0, "node B is outside the pool's selector");

    // 1. Six pods fit on A; the seventh stays Pending for want of kipam.io/ip.
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      pods.add(pod(processes.namespaces.get(i % 3), Fixtures.uniqueName("p" + i)));
    }
    await()
        .atMost(WITHIN)
        .untilAsserted(() -> assertThat(boundTo(pods, a)).as("pods bound to A").hasSize(6));
    Pod waiting = pods.stream().filter(p -> nodeOf(p) == null).findFirst().orElseThrow();
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(schedulingFailures(waiting))
                    .as("the scheduler's event for %s", waiting.getMetadata().getName())
                    .anyMatch(m -> m.contains("Insufficient " + RESOURCE)));
    assertThat(boundTo(pods, b)).as("nothing on B").isEmpty();

    // Deleting one pod of A lets the seventh schedule there.
    Pod gone = boundTo(pods, a).get(0);
    client.resource(gone).withGracePeriod(0).delete();
    pods.removeIf(
        p ->
            p.getMetadata().getName().equals(gone.getMetadata().getName())
                && p.getMetadata().getNamespace().equals(gone.getMetadata().getNamespace()));
    long deleted = System.nanoTime();
    await().atMost(WITHIN).until(() -> a.equals(nodeOf(waiting)));
    System.out.printf(
        "the pending pod was bound to A %.1f s after a pod of A was deleted%n",
        (System.nanoTime() - deleted) / 1e9);

    // 2. B gets no such pod until it carries the label; then within seconds it does.
    Pod eighth = pod(processes.namespaces.get(1), Fixtures.uniqueName("p7"));
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> assertThat(schedulingFailures(eighth)).anyMatch(m -> m.contains("Insufficient")));
    assertThat(nodeOf(eighth)).as("A is full and B outside the selector").isNull();
    Fixtures.label(client.nodes().withName(b), LABEL, selected);
    long labelled = System.nanoTime();
    await().atMost(WITHIN).until(() -> b.equals(nodeOf(eighth)));
    System.out.printf(
        "node B got a pod %.1f s after it was labelled into the pool's selector%n",
        (System.nanoTime() - labelled) / 1e9);
    assertThat(value(b)).isEqualTo(6);

    // 3. Node A deleted and registered again, as kubelet does: its value comes back.
    client.nodes().withName(a).withGracePeriod(0).delete();
    await().atMost(WITHIN).until(() -> client.nodes().withName(a).get() == null);
    register(a, true);
    long registered = System.nanoTime();
    awaitValue(a, 6, "node A registered again");
    System.out.printf(
        "node A had %s back %.1f s after it was registered again%n",
        RESOURCE, (System.nanoTime() - registered) / 1e9);
  }

  /**
   * The sample MutatingAdmissionPolicy (config/samples/pod-ip-request-policy.yaml), applied with
   * kubectl as a user would: a pod created in a namespace labelled {@code kipam.io/ip-request=true}
   * gets {@code kipam.io/ip: 1} in its first container's requests and limits; a pod elsewhere, or
   * on the host network, does not.
   */
  @Test
  void theSamplePolicyMakesPodsOfLabelledNamespacesRequestAnAddress() {
    Path sample =
        ControlPlaneBinaries.repositoryRoot().resolve("config/samples/pod-ip-request-policy.yaml");
    controlPlane.kubectl("apply", "-f", sample.toString());
    String labelled = Fixtures.namespace(client, "asks");
    Fixtures.label(client.namespaces().withName(labelled), "kipam.io/ip-request", "true");
    String other = processes.namespaces.get(0);
    // The policy takes effect once kube-apiserver's admission has seen it: create until it has.
    Pod mutated =
        await()
            .atMost(WITHIN)
            .until(
                () -> {
                  Pod p = pod(labelled, Fixtures.uniqueName("asks"), Map.of(), false);
                  return p;
                },
                p -> requested(p) != null);
    assertThat(requested(mutated)).isEqualTo("1");
    assertThat(mutated.getSpec().getContainers().get(0).getResources().getLimits())
        .containsEntry(RESOURCE, new Quantity("1"));
    assertThat(requested(pod(other, Fixtures.uniqueName("plain"), Map.of(), false)))
        .as("a namespace without the label")
        .isNull();
    assertThat(requested(pod(labelled, Fixtures.uniqueName("host"), Map.of(), true)))
        .as("a pod on the host network")
        .isNull();
  }

  private static String requested(Pod pod) {
    Map<String, Quantity> requests =
        pod.getSpec().getContainers().get(0).getResources().getRequests();
    Quantity q = requests == null ? null : requests.get(RESOURCE);
    return q == null ? null : q.toString();
  }

  private static void register(String name, boolean inPool) {
    Fixtures.registerNode(client, name);
    if (inPool) {
      Fixtures.label(client.nodes().withName(name), LABEL, selected);
    }
  }

  private static Pod pod(String namespace, String name) {
    Map<String, Quantity> one = Map.of(RESOURCE, new Quantity("1"));
    return pod(namespace, name, one, false);
  }

  /**
   * A pod with {@code resources} in its container; a pod on the host network, or one that asks
   * nothing, is for the policy test and selects no Node, so it never takes a Node's addresses.
   */
  private static Pod pod(
      String namespace, String name, Map<String, Quantity> resources, boolean hostNetwork) {
    return client
        .pods()
        .inNamespace(namespace)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withAutomountServiceAccountToken(false)
                .withHostNetwork(hostNetwork)
                .withNodeSelector(
                    resources.isEmpty() ? Map.of("kipam.io/test", "no-such-node") : Map.of())
                .addNewContainer()
                .withName("main")
                .withImage("registry.invalid/never-pulled:1")
                .withNewResources()
                .withRequests(resources)
                .withLimits(resources)
                .endResources()
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  private static String nodeOf(Pod pod) {
    Pod now = Cluster.current(client, pod);
    return now == null ? null : now.getSpec().getNodeName();
  }

  private static List<Pod> boundTo(List<Pod> pods, String node) {
    return pods.stream().filter(p -> node.equals(nodeOf(p))).toList();
  }

  private static List<String> schedulingFailures(Pod pod) {
    return client
        .resources(Event.class)
        .inNamespace(pod.getMetadata().getNamespace())
        .list()
        .getItems()
        .stream()
        .filter(e -> "FailedScheduling".equals(e.getReason()))
        .filter(e -> pod.getMetadata().getName().equals(e.getRegarding().getName()))
        .map(Event::getNote)
        .toList();
  }

  private static long value(String node) {
    Node now = client.nodes().withName(node).get();
    if (now == null || now.getStatus() == null || now.getStatus().getAllocatable() == null) {
      return -1;
    }
    Quantity q = now.getStatus().getAllocatable().get(RESOURCE);
    return q == null ? -1 : Quantity.getAmountInBytes(q).longValue();
  }

  private static void awaitValue(String node, long expected, String why) {
    await()
        .atMost(WITHIN)
        .alias(why)
        .untilAsserted(() -> assertThat(value(node)).as(why).isEqualTo(expected));
  }
}
