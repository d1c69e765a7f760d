package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two overlapping pools of one network created as close together as the test can, the second with
 * the smaller name (so that ordering by name alone would prefer it), round after round, while a
 * watch records every state of every pool the API server held. On those recorded states: never both
 * Ready at once, never a pool going from Ready to not Ready, and in the end one Ready and the other
 * refused for overlap.
 */
@WithControlPlane
class PoolOverlapRaceIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static final int ROUNDS = 10;

  @RegisterExtension
  static final OperatorPerClass cluster = OperatorPerClass.withSettings(Map.of());

  private final KubernetesClient client = cluster.client();
  private final Kipam kipam = new Kipam(client);

  /** One pool's Ready as a watch saw it: "Status/Reason", or "none". */
  private record Seen(String pool, String ready) {}

  /** Every state of every IPPool, in the order the API server stored them. */
  private static final class Recorder implements ResourceEventHandler<IPPool> {
    private final List<Seen> seen = new ArrayList<>();

    @Override
    public synchronized void onAdd(IPPool pool) {
      seen.add(new Seen(pool.getMetadata().getName(), ready(pool)));
    }

    @Override
    public synchronized void onUpdate(IPPool before, IPPool after) {
      onAdd(after);
    }

    @Override
    public synchronized void onDelete(IPPool pool, boolean unknownFinalState) {}

    synchronized List<Seen> of(Set<String> pools) {
      return seen.stream().filter(s -> pools.contains(s.pool())).toList();
    }

    private static String ready(IPPool pool) {
      if (pool.getStatus() == null || pool.getStatus().getConditions() == null) {
        return "none";
      }
      return pool.getStatus().getConditions().stream()
          .filter(c -> "Ready".equals(c.getType()))
          .findFirst()
          .map((Condition c) -> c.getStatus() + "/" + c.getReason())
          .orElse("none");
    }
  }

  @Test
  void ofTwoOverlappingPoolsCreatedTogetherOneIsReadyAtEveryMomentAndStaysSo() {
    Recorder recorder = new Recorder();
    // Resync 0: only what the watch delivers, in resourceVersion order.
    try (SharedIndexInformer<IPPool> informer =
        client.resources(IPPool.class).inform(recorder, 0)) {
      for (int round = 0; round < ROUNDS; round++) {
        String network = Fixtures.uniqueName("race");
        String first = Fixtures.uniqueName("z-first");
        String second = Fixtures.uniqueName("a-second");
        kipam.createPool(first, "10.77.0.0/24", 28, network);
        kipam.createPool(second, "10.77.0.0/25", 28, network);
        Set<String> pair = Set.of(first, second);

        await()
            .atMost(WITHIN)
            .untilAsserted(
                () ->
                    assertThat(latest(recorder.of(pair)).values())
                        .containsExactlyInAnyOrder("True/Checked", "False/Overlap"));

        List<Seen> history = recorder.of(pair);
        Map<String, String> now = new HashMap<>();
        Set<String> wasReady = new HashSet<>();
        for (Seen seen : history) {
          now.put(seen.pool(), seen.ready());
          assertThat(now.values().stream().filter("True/Checked"::equals).count())
              .as("round %d: pools Ready at once after %s in %s", round, seen, history)
              .isLessThanOrEqualTo(1);
          if (wasReady.contains(seen.pool())) {
            assertThat(seen.ready())
                .as("round %d: %s was Ready and turned; %s", round, seen.pool(), history)
                .isEqualTo("True/Checked");
          }
          if (seen.ready().equals("True/Checked")) {
            wasReady.add(seen.pool());
          }
        }
        // On the API objects themselves, not only on what the watch delivered.
        assertThat(List.of(kipam.conditionOf(first, "Ready"), kipam.conditionOf(second, "Ready")))
            .containsExactlyInAnyOrder("True/Checked", "False/Overlap");
      }
    }
  }

  private static Map<String, String> latest(List<Seen> history) {
    Map<String, String> now = new HashMap<>();
    history.forEach(s -> now.put(s.pool(), s.ready()));
    return now;
  }
}
