package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Two operator replicas sharing one Lease: only the holder reconciles; the other takes over. */
@WithControlPlane(crds = true)
class LeaderElectionIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static final String RECONCILES =
      "kipam_operator_reconciles_total{controller=\"ippool\",operation=\"reconcile\",outcome=\"success\"}";

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final Kipam kipam = new Kipam(controlPlane.client());

  @Test
  void onlyTheLeaderReconcilesAndTheStandbyTakesOverWhenItStops() throws Exception {
    String lease = Fixtures.uniqueName("kipam-operator");
    RunningOperator first = RunningOperator.start(controlPlane, Map.of("KIPAM_LEASE_NAME", lease));
    await().atMost(WITHIN).until(first::isLeader);
    try (RunningOperator second =
        RunningOperator.start(controlPlane, Map.of("KIPAM_LEASE_NAME", lease))) {
      try {
        String before = Fixtures.uniqueName("led");
        kipam.createPool(before, "10.70.0.0/24", 28, Fixtures.uniqueName("net"));
        await()
            .atMost(WITHIN)
            .until(() -> kipam.conditionOf(before, "Ready").equals("True/Checked"));

        assertThat(first.metric(RECONCILES)).isPositive();
        assertThat(second.isLeader()).isFalse();
        assertThat(second.metric(RECONCILES)).as("the standby reconciles nothing").isZero();
        assertThat(second.metric("kipam_operator_leader")).isZero();
        assertThat(second.get("/readyz").statusCode()).as("a standby is ready").isEqualTo(200);
      } finally {
        first.close();
      }

      await().atMost(WITHIN).until(second::isLeader);
      String after = Fixtures.uniqueName("led");
      kipam.createPool(after, "10.70.1.0/24", 28, Fixtures.uniqueName("net"));
      await().atMost(WITHIN).until(() -> kipam.conditionOf(after, "Ready").equals("True/Checked"));
      assertThat(second.metric(RECONCILES)).isPositive();
    }
  }
}
