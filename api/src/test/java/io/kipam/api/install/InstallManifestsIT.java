package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.WithControlPlane;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl apply -k config/default} on the real control plane: the server accepts every
 * object in a dry run and for real, and what it stores is what the install promises. Without a
 * kubelet the workloads stay Pending, which is all this tier can see of them.
 */
@WithControlPlane
class InstallManifestsIT {

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = controlPlane.client();

  @Test
  void theEntryPointIsAcceptedInADryRunAndForReal() {
    // A server-side dry run creates nothing, so the objects in kipam-system would meet a namespace
    // that does not exist yet: the namespace goes first (docs/install.md says the same).
    controlPlane.kubectl(
        "apply", "-f", KipamInstall.entryPoint().resolve("namespace.yaml").toString());
    String dryRun =
        controlPlane.kubectl(
            "apply", "--dry-run=server", "-k", KipamInstall.entryPoint().toString());
    assertThat(dryRun)
        .contains("namespace/kipam-system")
        .contains("deployment.apps/kipam-operator")
        .contains("daemonset.apps/kipam-node")
        .contains(
            "validatingadmissionpolicy.admissionregistration.k8s.io/kipam-node-writes-own-node")
        .contains("validatingadmissionpolicy.admissionregistration.k8s.io/kipam-labels-immutable")
        .contains(
            "validatingadmissionpolicy.admissionregistration.k8s.io/kipam-node-demand-own-node");

    KipamInstall.apply(controlPlane);

    Deployment operator =
        client.apps().deployments().inNamespace("kipam-system").withName("kipam-operator").get();
    assertThat(operator).isNotNull();
    assertThat(operator.getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo("kipam-operator");
    Container operatorContainer = operator.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(operatorContainer.getImage()).isEqualTo("kipam/kipam-operator:0.1.0-SNAPSHOT");
    assertThat(operatorContainer.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(operatorContainer.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(operatorContainer.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(operator.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot())
        .isTrue();

    DaemonSet node =
        client.apps().daemonSets().inNamespace("kipam-system").withName("kipam-node").get();
    assertThat(node).isNotNull();
    assertThat(node.getSpec().getUpdateStrategy().getRollingUpdate().getMaxSurge().getIntVal())
        .as("never two daemons on one node")
        .isZero();
    assertThat(node.getSpec().getTemplate().getSpec().getTolerations())
        .singleElement()
        .satisfies(t -> assertThat(t.getOperator()).isEqualTo("Exists"));
    assertThat(node.getSpec().getTemplate().getSpec().getHostNetwork()).isTrue();
    Container install = node.getSpec().getTemplate().getSpec().getInitContainers().get(0);
    assertThat(install.getName()).isEqualTo("install-cni");
    assertThat(install.getCommand())
        .containsExactly("java", "-cp", "@/app/jib-classpath-file", "io.kipam.node.CniInstaller");
    Container daemon = node.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(daemon.getImage()).isEqualTo("kipam/kipam-node:0.1.0-SNAPSHOT");
    assertThat(daemon.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("NODE_NAME");
              assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
            });

    assertThat(
            client
                .admissionRegistration()
                .v1()
                .validatingAdmissionPolicies()
                .withName("kipam-node-writes-own-node")
                .get())
        .isNotNull();
    assertThat(
            client
                .admissionRegistration()
                .v1()
                .validatingAdmissionPolicyBindings()
                .withName("kipam-node-writes-own-node")
                .get()
                .getSpec()
                .getValidationActions())
        .containsExactly("Deny");
    assertThat(client.serviceAccounts().inNamespace("kipam-system").withName("kipam-node").get())
        .isNotNull();
    assertThat(client.rbac().clusterRoles().withName("kipam-node").get()).isNotNull();
  }

  /** The Multus sample's NetworkAttachmentDefinition delegates IPAM to kipam, from its own pool. */
  @Test
  void theMultusSampleUsesKipamForIpam() throws IOException {
    Path sample =
        ControlPlaneBinaries.repositoryRoot().resolve("config/samples/multus/storage-network.yaml");
    List<HasMetadata> objects;
    try (InputStream in = Files.newInputStream(sample)) {
      objects = client.load(in).items();
    }
    assertThat(objects)
        .extracting(HasMetadata::getKind)
        .containsExactly("IPPool", "NetworkAttachmentDefinition");
    GenericKubernetesResource nad = (GenericKubernetesResource) objects.get(1);
    JsonNode config =
        new ObjectMapper()
            .readTree(
                (String)
                    ((java.util.Map<?, ?>) nad.getAdditionalProperties().get("spec"))
                        .get("config"));
    assertThat(config.path("ipam").path("type").asText()).isEqualTo("kipam");
    assertThat(config.path("ipam").path("pools").get(0).asText())
        .isEqualTo(objects.get(0).getMetadata().getName());
  }
}
