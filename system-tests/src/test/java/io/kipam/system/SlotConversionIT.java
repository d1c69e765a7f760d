package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.runtime.Checkpoint;
import io.kipam.system.harness.AddsAtOnce;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.PoolAssertions;
import io.kipam.system.harness.RestartHeld;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Exclusive slots converted to Shared when the pool is short, with real kipam-node processes and a
 * real kipam-operator: 8 nodes share 62 assignable addresses in four /28 slots (the pool /26 has 64
 * addresses; its network and broadcast address are not assignable), pods 26/10/6/6/4/4/2/2 = 60
 * over three namespaces.
 *
 * <p>The daemons run without {@code KIPAM_SHARED_SLOTS}, so every slot is claimed Exclusive: the
 * first four nodes each claim one with their first pod, and the other four can be served only once
 * kipam-operator asks slots to become Shared and their holders convert them. The operator's idle
 * delay is long, so no slot moves by the release handshake. A node that holds no slot at all is not
 * seen by the operator, so the first ADDs of the first four nodes run before the others start: the
 * node with 26 pods fills its slot and is the one that is seen short.
 */
class SlotConversionIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Duration RUNTIME_RETRIES = Duration.ofSeconds(60);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");

  /** How long kipam-operator pauses between deciding on a conversion and writing it. */
  private static final Duration PAUSE = Duration.ofSeconds(6);

  /** Pods per node: 60 of the pool's 62 assignable addresses. */
  private static final int[] PODS = {26, 10, 6, 6, 4, 4, 2, 2};

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("convert");

  @Test
  void eightNodesGetEveryPodAnAddressOfFourExclusiveSlotsThroughConversion() throws Exception {
    OperatorProcess operator =
        processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    String pool = Fixtures.uniqueName("convert");
    List<NodeRig> rigs = startNodes(pool, "10.206.0.0/26", n -> DAEMON);
    serveEveryPod(pool, rigs, operator);
  }

  /**
   * The same pods with kipam-operator SIGKILLed just after it asked a slot to become Shared, and
   * the donor's daemon SIGKILLed after it sub-claimed the first of its addresses, before it wrote
   * the mode: each is started again (without a hold) while the pods' ADDs are retried.
   */
  @Test
  void everyPodGetsAnAddressWhenOperatorAndDonorAreKilledMidConversion() throws Exception {
    String pool = Fixtures.uniqueName("convert");
    OperatorProcess operator = processes.operator();
    operator.holdAt("operator-share-asked").withEnv(Checkpoint.HOLD_POOL, pool);
    operator.startLeading(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    List<NodeRig> rigs =
        startNodes(
            pool,
            "10.206.1.0/26",
            n -> {
              Map<String, String> env = new HashMap<>(DAEMON);
              env.put(Checkpoint.HOLD_AT, "daemon-subclaimed");
              env.put(Checkpoint.HOLD_POOL, pool);
              env.put(Checkpoint.HOLD_FILE, processes.dir.resolve("held-" + n).toString());
              return env;
            });
    RestartHeld restarts =
        new RestartHeld(operator, "operator-share-asked", rigs, "daemon-subclaimed", WITHIN);
    try (restarts) {
      serveEveryPod(pool, rigs, operator);
    }
    System.out.printf(
        "killed mid-conversion: kipam-operator %d time(s), donor daemons of %s%n",
        restarts.operatorKills(), restarts.daemonsKilled());
    assertThat(restarts.operatorKills()).as("operator killed after asking").isEqualTo(1);
    assertThat(restarts.daemonsKilled()).as("donors killed mid-conversion").isNotEmpty();
  }

  /**
   * Pods arriving in any order, from the start: four nodes with 26/16/12/8 pods (62, every
   * assignable address of the /26), the nodes' pods interleaved and ADDed 8 at a time, each retried
   * as a runtime retries, daemons reporting block status at their default pace. Every node claims
   * one slot with its first pod; the nodes with more pods than their slot holds can be served only
   * by converting the others' slots, one after the other.
   */
  @Test
  void podsArrivingInAnyOrderGetEveryAddressOfAnExactPool() throws Exception {
    OperatorProcess operator =
        processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    String pool = Cluster.readiedPool(client, "convert", Cluster.spec("10.206.2.0/26", 28, 0));
    int[] spread = {26, 16, 12, 8};
    List<NodeRig> rigs = processes.nodes(pool, spread.length, Map.of());
    List<int[]> pods = new ArrayList<>();
    for (int n = 0; n < spread.length; n++) {
      for (int i = 0; i < spread[n]; i++) {
        pods.add(new int[] {n, i});
      }
    }
    java.util.Collections.shuffle(pods, new java.util.Random(1));
    ExecutorService callers = Executors.newFixedThreadPool(8);
    List<Future<CniCall.Outcome>> outcomes = new ArrayList<>();
    try {
      for (int[] pod : pods) {
        outcomes.add(
            callers.submit(
                () -> rigs.get(pod[0]).addRetried(List.of(pool), pod[1], RUNTIME_RETRIES)));
      }
      int ok = 0;
      List<String> failed = new ArrayList<>();
      for (Future<CniCall.Outcome> f : outcomes) {
        CniCall.Outcome outcome = f.get();
        if (outcome.ok()) {
          ok++;
        } else {
          failed.add(outcome.stdout());
        }
      }
      System.out.printf("pods in any order: %d of 62 got an address%n", ok);
      assertThat(failed).as("failed ADDs (operator log " + operator.log + ")").isEmpty();
    } finally {
      callers.shutdownNow();
    }
    List<IPAddress> held = Cluster.addresses(client, pool);
    assertThat(held.stream().map(a -> a.getSpec().getIp()).distinct()).hasSize(62);
  }

  /**
   * Creates the pool on {@code cidr} (a /26) and one registered node per entry of {@link #PODS},
   * daemons ready.
   */
  private List<NodeRig> startNodes(String pool, String cidr, IntFunction<Map<String, String>> env)
      throws Exception {
    Cluster.poolReadiedByOperator(client, pool, Cluster.spec(cidr, 28, 0));
    return processes.nodes(pool, PODS.length, env);
  }

  /**
   * The first four nodes claim a slot each with their first pod; then every node ADDs its pods at
   * once, each retried as a runtime retries; every pod gets an address, none held twice, each in a
   * block of its node, some slot Shared; after DEL of every pod the sub-claims go back.
   */
  private void serveEveryPod(String pool, List<NodeRig> rigs, OperatorProcess operator)
      throws Exception {
    Set<String> holders = new HashSet<>();
    for (int n = 0; n < 4; n++) {
      CniCall.Outcome first = rigs.get(n).add(pool, 0);
      assertThat(first.ok()).as(first.stdout()).isTrue();
      holders.add(rigs.get(n).node);
    }
    assertThat(Cluster.blocks(client, pool))
        .as("four Exclusive slots, one per node")
        .hasSize(4)
        .allMatch(b -> holders.contains(b.getSpec().getNode()));

    AddsAtOnce.run(
        rigs,
        pool,
        PODS,
        n -> n < 4 ? 1 : 0,
        RUNTIME_RETRIES,
        outcome ->
            assertThat(outcome.ok())
                .as(outcome.stdout() + " (operator log " + operator.log + ")")
                .isTrue());

    List<IPBlock> blocks = PoolAssertions.everyAddressOnceInABlockOfItsNode(client, pool, 60);
    List<IPBlock> slots = blocks.stream().filter(b -> b.getSpec().getParent() == null).toList();
    assertThat(slots).hasSize(4);
    assertThat(slots)
        .as("slots converted to Shared at kipam-operator's request")
        .anyMatch(s -> s.getStatus().getMode() == BlockMode.Shared)
        .filteredOn(s -> s.getStatus().getMode() == BlockMode.Shared)
        .allMatch(s -> s.getStatus().getShare() != null && s.getSpec().getNode() != null);

    for (int n = 0; n < PODS.length; n++) {
      for (int i = 0; i < PODS[n]; i++) {
        assertThat(rigs.get(n).del(pool, i).ok()).isTrue();
      }
    }
    PoolAssertions.subClaimsAndAddressesGone(client, pool, WITHIN);
  }

  /**
   * kipam-operator asks a slot to become Shared with the resourceVersion of its cached copy. If the
   * slot's holder reports a new count between the decision and the write, the write fails with 409.
   * The node that was short stays short and writes nothing more (it cannot allocate), so the
   * operator must decide again by itself, or the pool keeps its free addresses from that node for
   * good: its pods fail with "pool exhausted" while another node's slot has room.
   *
   * <p>The conflict is made certain: the operator pauses for a few seconds at {@code
   * operator-share-deciding} (slot chosen, {@code status.share} not yet written; {@code
   * KIPAM_HOLD_MILLIS}), and the test makes the chosen slot's holder allocate one more address
   * meanwhile, so its daemon writes the slot's new count before the operator writes. Real
   * kube-apiserver, operator and kipam-node processes; the pods spread over three namespaces.
   */
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
