package io.kipam.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRuleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes behaviours kipam's correctness rests on, shown against the real control plane: if
 * one of these fails, no kipam IT can be trusted.
 */
@WithControlPlane
class ControlPlaneIT {

  private static final Duration CONTROLLER_TIMEOUT = Duration.ofSeconds(90);

  private final KubernetesClient client;

  ControlPlaneIT(KubernetesClient client) {
    this.client = client;
  }

  @Test
  void createOfAnExistingNameFailsWithConflict() {
    String ns = Fixtures.namespace(client, "create-conflict");
    client.configMaps().inNamespace(ns).resource(configMap("taken")).create();

    assertThatThrownBy(
            () -> client.configMaps().inNamespace(ns).resource(configMap("taken")).create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
  }

  @Test
  void updateWithStaleResourceVersionFailsWithConflict() {
    String ns = Fixtures.namespace(client, "stale-update");
    ConfigMap stale = client.configMaps().inNamespace(ns).resource(configMap("versioned")).create();
    client.configMaps().inNamespace(ns).withName("versioned").edit(cm -> withData(cm, "first"));

    assertThatThrownBy(
            () -> client.configMaps().inNamespace(ns).resource(withData(stale, "second")).update())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(client.configMaps().inNamespace(ns).withName("versioned").get().getData())
        .containsEntry("value", "first");
  }

  @Test
  void garbageCollectorDeletesObjectsOwnedByADeletedPod() {
    String ns = Fixtures.namespace(client, "gc");
    Pod pod = client.pods().inNamespace(ns).resource(pod("owner", Map.of())).create();
    ConfigMap owned = configMap("owned-by-pod");
    owned
        .getMetadata()
        .setOwnerReferences(
            java.util.List.of(
                new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("Pod")
                    .withName(pod.getMetadata().getName())
                    .withUid(pod.getMetadata().getUid())
                    .withBlockOwnerDeletion(false)
                    .build()));
    client.configMaps().inNamespace(ns).resource(owned).create();

    client.pods().inNamespace(ns).withName("owner").withGracePeriod(0).delete();

    await()
        .atMost(CONTROLLER_TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(client.configMaps().inNamespace(ns).withName("owned-by-pod").get())
                    .isNull());
  }

  @Test
  void celValidationRuleRejectsABadObjectWithItsMessage() {
    CustomResourceDefinition crd =
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .resource(rangeCrd())
            .serverSideApply();
    Fixtures.awaitEstablished(client, crd.getMetadata().getName());
    ResourceDefinitionContext context =
        new ResourceDefinitionContext.Builder()
            .withGroup("tests.kipam.io")
            .withVersion("v1")
            .withKind("Range")
            .withPlural("ranges")
            .withNamespaced(false)
            .build();

    GenericKubernetesResource good = range("good-range", 1, 5);
    client.genericKubernetesResources(context).resource(good).create();

    assertThatThrownBy(
            () ->
                client
                    .genericKubernetesResources(context)
                    .resource(range("bad-range", 9, 2))
                    .create())
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).isEqualTo(422);
              assertThat(e.getMessage()).contains("spec.first must not be greater than spec.last");
            });
  }

  @Test
  void deletedNamespaceFinishesDeleting() {
    String ns = Fixtures.namespace(client, "doomed");
    client.configMaps().inNamespace(ns).resource(configMap("content")).create();

    client.namespaces().withName(ns).delete();

    await()
        .atMost(CONTROLLER_TIMEOUT)
        .untilAsserted(() -> assertThat(client.namespaces().withName(ns).get()).isNull());
  }

  @Test
  void schedulerBindsAPendingPodToARegisteredNode() {
    String ns = Fixtures.namespace(client, "scheduling");
    String nodeName = Fixtures.uniqueName("node");
    Fixtures.registerNode(client, nodeName);
    try {
      client
          .pods()
          .inNamespace(ns)
          .resource(pod("unbound", Map.of("kubernetes.io/hostname", nodeName)))
          .create();

      await()
          .atMost(CONTROLLER_TIMEOUT)
          .untilAsserted(
              () ->
                  assertThat(
                          client
                              .pods()
                              .inNamespace(ns)
                              .withName("unbound")
                              .get()
                              .getSpec()
                              .getNodeName())
                      .isEqualTo(nodeName));
    } finally {
      client.pods().inNamespace(ns).withName("unbound").withGracePeriod(0).delete();
      client.nodes().withName(nodeName).delete();
    }
  }

  private static ConfigMap configMap(String name) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().build();
  }

  private static ConfigMap withData(ConfigMap cm, String value) {
    cm.setData(Map.of("value", value));
    return cm;
  }

  private static Pod pod(String name, Map<String, String> nodeSelector) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withNodeSelector(nodeSelector)
        .withAutomountServiceAccountToken(false)
        .addNewContainer()
        .withName("main")
        .withImage("registry.invalid/never-pulled:1")
        .endContainer()
        .endSpec()
        .build();
  }

  private static CustomResourceDefinition rangeCrd() {
    var integer = new JSONSchemaPropsBuilder().withType("integer").build();
    var spec =
        new JSONSchemaPropsBuilder()
            .withType("object")
            .addToProperties("first", integer)
            .addToProperties("last", integer)
            .withXKubernetesValidations(
                new ValidationRuleBuilder()
                    .withRule("self.first <= self.last")
                    .withMessage("spec.first must not be greater than spec.last")
                    .build())
            .build();
    return new CustomResourceDefinitionBuilder()
        .withNewMetadata()
        .withName("ranges.tests.kipam.io")
        .endMetadata()
        .withNewSpec()
        .withGroup("tests.kipam.io")
        .withScope("Cluster")
        .withNewNames()
        .withKind("Range")
        .withPlural("ranges")
        .withSingular("range")
        .endNames()
        .addNewVersion()
        .withName("v1")
        .withServed(true)
        .withStorage(true)
        .withNewSchema()
        .withNewOpenAPIV3Schema()
        .withType("object")
        .addToProperties("spec", spec)
        .endOpenAPIV3Schema()
        .endSchema()
        .endVersion()
        .endSpec()
        .build();
  }

  private static GenericKubernetesResource range(String name, int first, int last) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("tests.kipam.io/v1")
        .withKind("Range")
        .withNewMetadata()
        .withName(Fixtures.uniqueName(name))
        .endMetadata()
        .addToAdditionalProperties("spec", Map.of("first", first, "last", last))
        .build();
  }
}
