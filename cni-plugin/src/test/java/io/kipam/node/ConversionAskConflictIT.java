package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.Checkpoint;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * kipam-operator asks a slot to become Shared with the resourceVersion of its cached copy. If the
 * slot's holder reports a new count between the decision and the write, the write fails with 409.
 * The node that was short stays short and writes nothing more (it cannot allocate), so the operator
 * must decide again by itself, or the pool keeps its free addresses from that node for good: its
 * pods fail with "pool exhausted" while another node's slot has room.
 *
 * <p>The conflict is made certain: the operator pauses for a few seconds at {@code
 * operator-share-deciding} (slot chosen, {@code status.share} not yet written; {@code
 * KIPAM_HOLD_MILLIS}), and the test makes the chosen slot's holder allocate one more address
 * meanwhile, so its daemon writes the slot's new count before the operator writes. Real
 * kube-apiserver, operator and kipam-node processes; the pods spread over three namespaces.
 */
@WithControlPlane
class ConversionAskConflictIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Duration PAUSE = Duration.ofSeconds(6);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");

  private final ControlPlane controlPlane;
  private final KubernetesClient client;
  private KipamProcesses processes;

  ConversionAskConflictIT(ControlPlane controlPlane, KubernetesClient client) {
    this.controlPlane = controlPlane;
    this.client = client;
  }

  @BeforeAll
  static void installCrds(KubernetesClient client) {
    KipamCrds.install(client);
  }

  @BeforeEach
  void setUp() throws Exception {
    processes = new KipamProcesses(controlPlane, client, "askconflict");
  }

  @AfterEach
  void stopAll() throws Exception {
    processes.close();
  }

  @Test
  void aConversionRequestThatConflictsIsDecidedAgain() throws Exception {
    String pool = Fixtures.uniqueName("askconflict");
    OperatorProcess operator = processes.operator();
    operator
        .holdAt("operator-share-deciding")
        .withEnv(Checkpoint.HOLD_POOL, pool)
        .withEnv(Checkpoint.HOLD_MILLIS, Long.toString(PAUSE.toMillis()));
    operator.startLeading(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    // Two /28 slots of 15 assignable addresses each; no slot is left once both are claimed.
    Cluster.poolReadiedByOperator(client, pool, Cluster.spec("10.207.0.0/27", 28, 0));
    NodeRig holder = processes.node(pool, DAEMON);
    NodeRig full = processes.node(pool, DAEMON);
    for (int i = 0; i < 3; i++) {
      assertThat(holder.add(pool, i).ok()).isTrue();
    }
    for (int i = 0; i < 15; i++) {
      CniCall.Outcome outcome = full.add(pool, i);
      assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    }
    IPBlock slot = onlySlotOf(holder, pool);

    operator.awaitHeld("operator-share-deciding", WITHIN);
    long decidedAt = System.nanoTime();
    assertThat(holder.add(pool, 3).ok()).isTrue();
    await().atMost(WITHIN).until(() -> allocated(slot.getMetadata().getName()) == 4);
    assertThat(Duration.ofNanos(System.nanoTime() - decidedAt))
        .as("the holder's new count was written while the operator paused before its write")
        .isLessThan(PAUSE);

    CniCall.Outcome sixteenth = full.addRetried(List.of(pool), 15, WITHIN);
    assertThat(sixteenth.ok())
        .as(
            "the full node's ADD is served from the holder's slot once it is Shared: %s"
                + " (operator log %s)",
            sixteenth.stdout(), operator.log)
        .isTrue();
    IPBlock converted =
        client.resources(IPBlock.class).withName(slot.getMetadata().getName()).get();
    assertThat(converted.getStatus().getMode()).isEqualTo(BlockMode.Shared);
    assertThat(Cluster.addresses(client, pool).stream().map(a -> a.getSpec().getIp()).distinct())
        .as("no address held twice, across namespaces")
        .hasSize(3 + 1 + 16);
  }

  private IPBlock onlySlotOf(NodeRig rig, String pool) {
    List<IPBlock> mine = rig.blocks(pool);
    assertThat(mine).hasSize(1);
    return mine.get(0);
  }

  private long allocated(String block) {
    IPBlock current = client.resources(IPBlock.class).withName(block).get();
    return current.getStatus() == null || current.getStatus().getAllocated() == null
        ? -1
        : current.getStatus().getAllocated();
  }
}
