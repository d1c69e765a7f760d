package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kipam-operator as its own process next to the node tests: it marks a plainly created pool Ready,
 * and after a SIGKILL a replacement takes the Lease over and marks the next pool Ready too.
 */
class OperatorProcessIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static OperatorProcess operator;

  private final KubernetesClient client = ControlPlane.shared().client();

  @BeforeAll
  static void start(ControlPlane controlPlane, KubernetesClient client) throws Exception {
    KipamCrds.install(client);
    Fixtures.registerNode(client, Fixtures.uniqueName("node"));
    operator =
        new OperatorProcess(
                Files.createTempDirectory("kipam-operator-process-it"),
                controlPlane.adminKubeconfig(),
                client)
            .start();
    operator.awaitLeader(WITHIN);
  }

  @AfterAll
  static void stop() throws Exception {
    Close.all(operator);
  }

  /** Creates a pool as an administrator would, with no status. */
  private String createPool(String cidr) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(Fixtures.uniqueName("op")).build());
    pool.setSpec(Cluster.spec(cidr, 28, 0));
    return client.resource(pool).create().getMetadata().getName();
  }

  private void awaitReady(String name) {
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              IPPool pool = client.resources(IPPool.class).withName(name).get();
              assertThat(pool.getStatus())
                  .as("status of pool %s; operator log: %s", name, operator.log)
                  .isNotNull();
              assertThat(pool.getStatus().getConditions())
                  .filteredOn(c -> "Ready".equals(c.getType()))
                  .singleElement()
                  .extracting(Condition::getStatus, Condition::getObservedGeneration)
                  .containsExactly("True", pool.getMetadata().getGeneration());
            });
  }

  @Test
  void aPoolCreatedWithoutStatusIsMarkedReadyByTheOperatorProcess() {
    awaitReady(createPool("10.229.0.0/24"));
  }

  @Test
  void aReplacementTakesTheLeaseOverAfterSigkillAndMarksTheNextPoolReady() throws Exception {
    Lease before = operator.awaitLeader(WITHIN);
    String killed = operator.identity();

    operator.kill();
    String pool = createPool("10.229.1.0/24");
    operator.withEnv("POD_NAME", Fixtures.uniqueName("operator")).restart();

    Lease after = operator.awaitLeader(WITHIN);
    assertThat(after.getSpec().getHolderIdentity()).isNotEqualTo(killed);
    assertThat(after.getSpec().getLeaseTransitions())
        .isGreaterThan(before.getSpec().getLeaseTransitions());
    awaitReady(pool);
  }
}
