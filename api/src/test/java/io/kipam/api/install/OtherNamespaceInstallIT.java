package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * kipam installed into a namespace of the user's choosing with the overlay
 * config/samples/other-namespace, on a control plane of its own (the shared one has kipam in
 * kipam-system): the node admission policies apply to the daemons' service account in that
 * namespace, and nothing refers to kipam-system.
 */
@WithControlPlane
class OtherNamespaceInstallIT {

  private static final String NAMESPACE = "kipam-net";

  @Test
  void thePoliciesApplyToTheServiceAccountsOfTheNamespaceKipamIsInstalledIn() {
    try (ControlPlane controlPlane = ControlPlane.fresh();
        KubernetesClient admin = controlPlane.client()) {
      KipamCrds.install(admin);
      String overlay =
          ControlPlaneBinaries.repositoryRoot()
              .resolve("config/samples/other-namespace")
              .toString();
      assertThat(controlPlane.kubectl("kustomize", overlay)).doesNotContain("kipam-system");
      System.out.println(controlPlane.kubectl("apply", "-k", overlay));
      for (String node : List.of("node-a", "node-b")) {
        admin
            .resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build())
            .serverSideApply();
      }
      try (KubernetesClient nodeA =
              client(controlPlane, token(controlPlane, "kipam-node", "node-a"));
          KubernetesClient operator =
              client(controlPlane, token(controlPlane, "kipam-operator", null))) {
        await()
            .atMost(Duration.ofSeconds(120))
            .untilAsserted(
                () ->
                    assertThatThrownBy(
                            () ->
                                nodeA
                                    .resource(TestBlocks.slot("other", "10.46.0.0/28", "node-b"))
                                    .dryRun()
                                    .create())
                        .isInstanceOfSatisfying(
                            KubernetesClientException.class,
                            e -> {
                              assertThat(e.getCode()).isEqualTo(403);
                              assertThat(e.getMessage())
                                  .contains(
                                      "kipam-node of node node-a may only write IPBlocks whose"
                                          + " spec.node is node-a");
                            }));
        IPBlock own = nodeA.resource(TestBlocks.slot("other", "10.46.0.16/28", "node-a")).create();
        assertThat(own.getMetadata().getUid()).isNotNull();
        assertThatThrownBy(() -> NodeAttacks.demand(nodeA, "node-b", "other"))
            .hasMessageContaining("kipam-node may change only the Node its service-account token");
        NodeAttacks.demand(nodeA, "node-a", "other");
        assertThatThrownBy(
                () ->
                    operator
                        .nodes()
                        .withName("node-b")
                        .subresource("status")
                        .patch(
                            PatchContext.of(PatchType.JSON_MERGE),
                            "{\"status\":{\"capacity\":{\"cpu\":\"512\"}}}"))
            .hasMessageContaining("kipam-operator may change only kipam.io/ip");
        System.out.println(
            "kipam in "
                + NAMESPACE
                + ": node-a's token refused node-b's block and Node, its own admitted;"
                + " kipam-operator's token refused a Node's cpu capacity");
      }
    }
  }

  private static String token(ControlPlane controlPlane, String account, String node) {
    return node == null
        ? controlPlane.kubectl("create", "token", account, "-n", NAMESPACE).trim()
        : controlPlane
            .kubectl(
                "create",
                "token",
                account,
                "-n",
                NAMESPACE,
                "--bound-object-kind",
                "Node",
                "--bound-object-name",
                node)
            .trim();
  }

  private static KubernetesClient client(ControlPlane controlPlane, String token) {
    return new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(controlPlane.adminConfig()).withOauthToken(token).build())
        .build();
  }
}
