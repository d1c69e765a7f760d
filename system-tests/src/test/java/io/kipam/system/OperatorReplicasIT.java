package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.PlayedOperator;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two kipam-operator replicas as two processes competing for one Lease, next to a real kipam-node:
 * only the leader reconciles; the leader SIGKILLed in the middle of a release round hands over to
 * the other, which finishes the round; nothing is done twice and nothing is lost.
 */
class OperatorReplicasIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = ControlPlane.shared().client();
  private final PlayedOperator blocks = new PlayedOperator(client);

  private OperatorProcess replica(Path dir, String lease, Map<String, String> leaseTimers)
      throws IOException {
    OperatorProcess replica =
        new OperatorProcess(dir, controlPlane.adminKubeconfig(), client)
            .withEnv("KIPAM_LEASE_NAME", lease)
            .withMetricsPort()
            .withEnv("KIPAM_BLOCK_IDLE_SECONDS", "2");
    leaseTimers.forEach(replica::withEnv);
    return replica;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#lease")
  void theStandbyWritesNothingAndFinishesTheRoundOfALeaderSigkilledInTheMiddle(
      Map<String, String> leaseTimers) throws Exception {
    KipamCrds.install(client);
    Path dir = Files.createTempDirectory("kipam-operator-replicas-it");
    String lease = Fixtures.uniqueName("kipam-operator");
    OperatorProcess first = replica(dir, lease, leaseTimers).start();
    OperatorProcess second = null;
    NodeRig node = null;
    try {
      first.awaitLeader(WITHIN);
      second = replica(dir, lease, leaseTimers).start();
      String pool = Cluster.readiedPool(client, "replicas", Cluster.spec("10.212.0.0/24", 28, 0));
      node =
          NodeRig.start(
              controlPlane,
              client,
              dir,
              NodeRig.namespaces(client, "rep"),
              pool,
              Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1"));
      String ip = node.add(pool, 0).ip();
      String block = node.blockOf(pool, ip).orElseThrow().getMetadata().getName();
      assertThat(node.del(pool, 0).ok()).isTrue();
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .until(() -> Long.valueOf(0).equals(blocks.block(block).getStatus().getAllocated()));

      // The daemon is down: the round the leader opens stays open until the daemon is back.
      node.daemon.kill();
      await().atMost(WITHIN).until(() -> blocks.state(block) == ReleaseState.Requested);
      String round = blocks.block(block).getStatus().getRelease().getRequestedAt();
      OperatorProcess standby = second;
      await()
          .atMost(WITHIN)
          .ignoreExceptions()
          .untilAsserted(() -> assertThat(standby.metric("kipam_operator_leader")).isZero());
      assertThat(standby.metric("kipam_operator_reconciles_total"))
          .as("the standby reconciles nothing (log %s)", standby.log)
          .isZero();

      assertThat(first.metric("kipam_operator_reconciles_total"))
          .as("the leader reconciles")
          .isPositive();

      first.kill();
      long killed = System.nanoTime();
      second.awaitLeader(WITHIN);
      System.out.printf(
          "the standby led %.1f s after the leader's SIGKILL (lease %d s)%n",
          (System.nanoTime() - killed) / 1e9, second.settings().leaseDuration().toSeconds());
      node.daemon.start();

      await()
          .atMost(WITHIN)
          .alias("the new leader finishes the round (log " + second.log + ")")
          .until(() -> blocks.block(block) == null);
      assertThat(second.metric("kipam_operator_leader")).isOne();
      assertThat(second.metric("kipam_operator_reconciles_total")).isPositive();
      assertThat(reasons(block))
          .as("one request, one release: nothing done twice")
          .containsOnlyOnce("ReleaseRequested", "Released");
      assertThat(events(block).stream().filter(e -> "ReleaseRequested".equals(e.getReason())))
          .singleElement()
          .satisfies(e -> assertThat(e.getCount()).isOne());
      assertThat(round).isNotBlank();
    } finally {
      if (node != null) {
        node.close();
      }
      if (second != null) {
        second.close();
      }
      first.close();
    }
  }

  private List<Event> events(String name) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  private List<String> reasons(String name) {
    return events(name).stream().map(Event::getReason).toList();
  }
}
