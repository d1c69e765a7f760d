package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator runs with nothing but {@code config/rbac/operator-role.yaml}: a service account's
 * token, through every kind of call it makes (watches, pool status and finalizer, block status and
 * deletes, IPAddress lists, Node reads, Events, the Lease) and through the audit (IPAddress pages,
 * Pod reads, the orphan's fresh read, delete and the removal of its finalizer {@code
 * kipam.io/attachment}). A verb missing from the role fails this test; a verb the operator does not
 * need is caught by review of the role's comments.
 *
 * <p>Why the daemon is played: this module tests the operator alone, and each test needs one exact
 * report or answer of a node daemon (a count, a {@code Ready} for a given round) at one exact
 * moment, which {@code reportAllocated} and {@code answer} write as the daemon writes them. With
 * real kipam-node processes, here the role is the point; the node module's ITs run the operator
 * with admin rights.
 */
@WithControlPlane(crds = true)
class OperatorRbacWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = controlPlane.client();
  private final Kipam kipam = new Kipam(client);

  @BeforeAll
  static void applyRole(KubernetesClient client) throws Exception {
    if (client.namespaces().withName("kipam-system").get() == null) {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder()
                  .withNewMetadata()
                  .withName("kipam-system")
                  .endMetadata()
                  .build())
          .create();
    }
    Path role = ControlPlaneBinaries.repositoryRoot().resolve("config/rbac/operator-role.yaml");
    try (InputStream in = Files.newInputStream(role)) {
      List<HasMetadata> objects = client.load(in).items();
      for (HasMetadata object : objects) {
        client.resource(object).forceConflicts().serverSideApply();
      }
    }
  }

  /** A kubeconfig holding a fresh token of the kipam-operator service account. */
  private Path serviceAccountKubeconfig() throws Exception {
    String token =
        client
            .serviceAccounts()
            .inNamespace("kipam-system")
            .withName("kipam-operator")
            .tokenRequest(
                new TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(3600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    Path file = Files.createTempFile("kipam-operator-", ".kubeconfig");
    Files.writeString(
        file,
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: test",
            "  cluster:",
            "    server: " + controlPlane.apiServerUrl(),
            "    certificate-authority: " + controlPlane.adminConfig().getCaCertFile(),
            "users:",
            "- name: kipam-operator",
            "  user:",
            "    token: " + token,
            "contexts:",
            "- name: test",
            "  context:",
            "    cluster: test",
            "    user: kipam-operator",
            "current-context: test",
            ""));
    return file;
  }

  @Test
  void theOperatorDoesItsWholeJobWithOnlyItsRole() throws Exception {
    String node = Fixtures.uniqueName("node");
    Fixtures.registerNode(client, node);
    String gone = Fixtures.uniqueName("node");
    Fixtures.registerNode(client, gone);
    Map<String, String> env = RunningOperator.environment(controlPlane);
    env.put("KUBECONFIG", serviceAccountKubeconfig().toString());
    env.put("KIPAM_LEASE_NAMESPACE", "kipam-system");
    env.put("KIPAM_BLOCK_IDLE_SECONDS", "1");

    try (RunningOperator operator = RunningOperator.start(env)) {
      await().atMost(WITHIN).until(operator::isLeader);
      String name = Fixtures.uniqueName("rbac");
      IPPool pool = kipam.checkedPool(name, "10.80.0.0/24", WITHIN);
      await().atMost(WITHIN).until(() -> kipam.eventReasons(name).contains("Ready"));

      // The release handshake: status write, fresh read, IPAddress list, delete.
      IPBlock released = kipam.claimReported(pool, "10.80.0.0/28", node, 0);
      await()
          .atMost(WITHIN)
          .until(
              () -> {
                IPBlock b = kipam.block(released.getMetadata().getName());
                return b.getStatus() != null && b.getStatus().getRelease() != null;
              });
      kipam.answer(released.getMetadata().getName(), ReleaseState.Ready, "empty");
      await().atMost(WITHIN).until(() -> kipam.block(released.getMetadata().getName()) == null);

      // A deleted Node's block: Node watch and fresh read.
      IPBlock orphan = kipam.claimReported(pool, "10.80.0.16/28", gone, 1);
      client.nodes().withName(gone).delete();
      await().atMost(WITHIN).until(() -> kipam.block(orphan.getMetadata().getName()) == null);

      // Pool deletion: IPAddress list, block delete, finalizer removal.
      IPBlock held = kipam.claimReported(pool, "10.80.0.32/28", node, 1);
      IPAddress address =
          kipam.allocate(Fixtures.namespace(client, "rbac"), held, Kipam.addressIn(held, 3));
      client.resources(IPPool.class).withName(name).delete();
      await()
          .atMost(WITHIN)
          .until(() -> kipam.conditionOf(name, "Terminating").equals("True/Deleting"));
      kipam.delete(address);
      kipam.reportAllocated(held.getMetadata().getName(), 0);
      kipam.answerWhenAsked(held.getMetadata().getName(), ReleaseState.Ready, WITHIN);
      await().atMost(WITHIN).until(() -> kipam.pool(name) == null);
      assertThat(kipam.block(held.getMetadata().getName())).isNull();
      assertThat(
              operator.metricSum(
                  "kipam_operator_reconciles_total{controller=\"ippool\",operation=\"reconcile\",outcome=\"error\"}"))
          .isZero();
    }
  }

  @Test
  void theAuditDoesItsJobWithOnlyItsRole() throws Exception {
    Map<String, String> env = RunningOperator.environment(controlPlane);
    env.put("KUBECONFIG", serviceAccountKubeconfig().toString());
    env.put("KIPAM_LEASE_NAMESPACE", "kipam-system");
    env.put("KIPAM_AUDIT_SECONDS", "1");
    env.put("KIPAM_ORPHAN_GRACE_SECONDS", "1");

    try (RunningOperator operator = RunningOperator.start(env)) {
      await().atMost(WITHIN).until(operator::isLeader);
      IPPool pool =
          kipam.createPool(
              Fixtures.uniqueName("rbac-audit"), "10.81.0.0/24", 28, Fixtures.uniqueName("net"));
      // A block of a Node that never registered: its address is the operator's to end.
      IPBlock block = kipam.claimBlock(pool, "10.81.0.0/28", Fixtures.uniqueName("gone"));
      String namespace = Fixtures.namespace(client, "rbac-audit");
      // The audit's pages, Pod and Node reads, fresh read, delete, finalizer patch and Events: an
      // address whose Pod never existed on a Node that does not exist goes for good.
      IPAddress orphan = kipam.allocate(namespace, block, Kipam.addressIn(block, 1));
      await()
          .atMost(WITHIN)
          .until(
              () ->
                  client
                          .resources(IPAddress.class)
                          .inNamespace(namespace)
                          .withName(orphan.getMetadata().getName())
                          .get()
                      == null);
      await()
          .atMost(WITHIN)
          .until(
              () ->
                  client
                      .v1()
                      .events()
                      .inNamespace(namespace)
                      .withField("involvedObject.name", orphan.getMetadata().getName())
                      .list()
                      .getItems()
                      .stream()
                      .map(e -> e.getReason())
                      .toList()
                      .containsAll(List.of("OrphanRemoved", "AttachmentEnded")));
      assertThat(operator.metric("kipam_audit_orphans_removed_total{reason=\"pod\"}")).isEqualTo(1);
      assertThat(operator.metric("kipam_audit_attachments_ended_total")).isEqualTo(1);
    }
  }
}
