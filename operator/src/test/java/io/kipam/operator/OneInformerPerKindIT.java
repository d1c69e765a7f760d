package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * kipam-operator runs one informer per kind (design §6: one cache per kind, shared by every
 * controller that needs it): the watches its clients open, as kube-apiserver receives them, are one
 * of pools, one of blocks and one of Nodes, with both controllers and the admission webhook
 * running, and nothing else is watched.
 */
@WithControlPlane(crds = true)
class OneInformerPerKindIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);

  private final ControlPlane controlPlane = ControlPlane.shared();

  @Test
  void opensOneWatchOfPoolsOneOfBlocksAndOneOfNodes() throws Exception {
    try (RunningOperator operator =
        RunningOperator.start(
            controlPlane,
            Map.of(
                "KIPAM_WEBHOOK", "true",
                "KIPAM_WEBHOOK_PORT", "0",
                "KIPAM_WEBHOOK_SECRET", Fixtures.uniqueName("kipam-webhook-tls")))) {
      await().atMost(WITHIN).until(operator::isLeader);
      await().atMost(WITHIN).until(() -> operator.get("/readyz").statusCode() == 200);

      Map<String, Integer> watches = operator.operator().watchesOpened();
      System.out.println("kipam-operator's watches by resource: " + watches);
      assertThat(watches)
          .containsExactlyInAnyOrderEntriesOf(
              Map.of("ippools.kipam.io", 1, "ipblocks.kipam.io", 1, "nodes", 1));
      Map<String, Integer> staleable = operator.operator().staleableReads();
      System.out.println("kipam-operator's reads at resourceVersion=0: " + staleable);
      assertThat(staleable)
          .as("its caches are filled by consistent reads, never at resourceVersion=0")
          .isEmpty();
    }
  }
}
