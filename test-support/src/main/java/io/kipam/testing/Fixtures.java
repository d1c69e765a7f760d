package io.kipam.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Objects that many tests need and that take a few steps to make right on a kubelet-less cluster.
 */
public final class Fixtures {

  private Fixtures() {}

  /** A name no other test of this run uses: {@code prefix} plus a random suffix. */
  public static String uniqueName(String prefix) {
    return prefix + "-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
  }

  private static final InheritableThreadLocal<String> testNetwork =
      new InheritableThreadLocal<>() {
        @Override
        protected String initialValue() {
          return uniqueName("net");
        }
      };

  /**
   * The isolated network ({@code spec.network}) of the pools a test makes without naming one: one
   * per test method (and one for a class's {@code @BeforeAll}), set by {@link
   * ControlPlaneExtension}. The tests of a module share one control plane, so pools of different
   * tests may overlap without the operator refusing either; the pools of one test share a network,
   * as the pools of one interface do (kipam-node refuses a configuration whose pools are of two
   * networks). It is the test thread's (and inherited by the threads it starts), so that a class
   * running beside the others ({@link BesideTheSuite}) keeps its own.
   */
  public static String testNetwork() {
    return testNetwork.get();
  }

  /** A new {@link #testNetwork} for the calling thread's next test. */
  public static void newTestNetwork() {
    testNetwork.set(uniqueName("net"));
  }

  /**
   * Changes an object as {@code kubectl patch --type=merge} does: the server applies {@code patch}
   * to the object it holds, with no resourceVersion precondition. Objects that kipam's processes
   * write meanwhile (Nodes, IPPools) would fail a read-modify-write with a 409 whenever a write of
   * theirs lands in between, which a user's tool retries and a test would report as a failure.
   */
  public static <T extends HasMetadata> T mergePatch(
      io.fabric8.kubernetes.client.dsl.EditReplacePatchable<T> object, Map<String, ?> patch) {
    return object.patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
  }

  /** Sets one label of an object, by {@link #mergePatch}. */
  public static <T extends HasMetadata> T label(Resource<T> object, String key, String value) {
    return mergePatch(object, Map.of("metadata", Map.of("labels", Map.of(key, value))));
  }

  /**
   * Creates a namespace and waits for its default service account, without which the API server's
   * ServiceAccount admission refuses Pods, exactly as in a real cluster right after namespace
   * creation.
   */
  public static String namespace(KubernetesClient client, String prefix) {
    String name = uniqueName(prefix);
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    // After tests that restart kube-apiserver many times, kube-controller-manager's watches may be
    // in their longest back-off (30 s per watch), so its service account controller can take a
    // minute or more to notice a new namespace.
    awaitCondition(
        "default service account in namespace " + name,
        Duration.ofSeconds(180),
        () -> client.serviceAccounts().inNamespace(name).withName("default").get() != null);
    return name;
  }

  /** A Node object with a kubelet's labels and nothing else, for a create. */
  public static Node bareNode(String name) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(Map.of("kubernetes.io/hostname", name, "kubernetes.io/os", "linux"))
        .endMetadata()
        .build();
  }

  /**
   * A Pod named {@code name} bound to {@code node}, its image never pulled: with no kubelet it
   * never runs, but it owns its addresses. To be given more before it is created.
   */
  public static io.fabric8.kubernetes.api.model.PodBuilder podOn(String name, String node) {
    return new io.fabric8.kubernetes.api.model.PodBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withNodeName(node)
        .withAutomountServiceAccountToken(false)
        .addNewContainer()
        .withName("main")
        .withImage("registry.invalid/never-pulled:1")
        .endContainer()
        .endSpec();
  }

  /**
   * Registers a Node object as a kubelet would, Ready and with room for pods. With no kubelet and
   * no node lifecycle controller, two things are done by hand: the Ready condition is written to
   * the status, and the {@code node.kubernetes.io/not-ready} taint that admission puts on every new
   * Node is removed, as the lifecycle controller would once the node reports Ready.
   */
  public static Node registerNode(KubernetesClient client, String name) {
    client.nodes().resource(bareNode(name)).create();
    // Merge patches without a resourceVersion: kipam-operator may write kipam.io/ip into the status
    // the moment the Node exists, and a read-modify-write would then fail with 409 (or, as an
    // update, drop the operator's value).
    Map<String, String> capacity = Map.of("cpu", "8", "memory", "32Gi", "pods", "250");
    Map<String, Object> ready =
        Map.of(
            "type", "Ready",
            "status", "True",
            "reason", "KubeletReady",
            "message", "registered by a kipam test",
            "lastHeartbeatTime", Instant.now().toString(),
            "lastTransitionTime", Instant.now().toString());
    mergePatch(
        client.nodes().withName(name).subresource("status"),
        Map.of(
            "status",
            Map.of(
                "capacity", capacity,
                "allocatable", capacity,
                "conditions", java.util.List.of(ready))));
    Node node = client.nodes().withName(name).get();
    if (node.getSpec() != null && node.getSpec().getTaints() != null) {
      var kept =
          node.getSpec().getTaints().stream()
              .filter(t -> !t.getKey().startsWith("node.kubernetes.io/"))
              .toList();
      node = mergePatch(client.nodes().withName(name), Map.of("spec", Map.of("taints", kept)));
    }
    return node;
  }

  /** Waits until the API server serves the custom resource defined by CRD {@code name}. */
  public static void awaitEstablished(KubernetesClient client, String name) {
    awaitCondition(
        "CRD " + name + " to be established",
        Duration.ofSeconds(60),
        () -> {
          CustomResourceDefinition crd =
              client.apiextensions().v1().customResourceDefinitions().withName(name).get();
          return crd != null
              && crd.getStatus() != null
              && crd.getStatus().getConditions() != null
              && crd.getStatus().getConditions().stream()
                  .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
        });
  }

  /**
   * Polls until {@code condition} holds; for fixtures, where Awaitility is not on the classpath.
   */
  static void awaitCondition(
      String what, Duration timeout, java.util.function.BooleanSupplier condition) {
    Instant deadline = Instant.now().plus(timeout);
    while (!condition.getAsBoolean()) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            "timed out after " + timeout.toSeconds() + "s waiting for " + what);
      }
      Probe.sleep(Duration.ofMillis(100));
    }
  }
}
