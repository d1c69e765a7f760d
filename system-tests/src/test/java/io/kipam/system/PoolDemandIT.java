package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.runtime.Checkpoint;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.PoolAssertions;
import io.kipam.system.harness.RestartHeld;
import io.kipam.system.harness.RuntimeRetries;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Demand is visible (design §5a): a node whose ADD finds the pool short records it on its Node
 * ({@code kipam.io/demand}), and kipam-operator converts a slot to Shared for it even when the node
 * holds no slot at all and no slot is full. Real kube-apiserver, kipam-operator and kipam-node
 * processes; pods over three namespaces; slots claimed Exclusive only ({@code KIPAM_SHARED_SLOTS}
 * off), no idle moves.
 */
class PoolDemandIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Duration RETRY_EVERY = Duration.ofSeconds(2);

  /** With a process killed or stopped on the way, which costs a restart or a 30 s answer wait. */
  private static final Duration RESTARTED_WITHIN = Duration.ofSeconds(120);

  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");
  private static final Map<String, String> OPERATOR = Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600");
  private static final String DONOR_STEP = "daemon-subclaimed";
  private static final String OPERATOR_STEP = "operator-share-asked";
  private static final AtomicInteger SUBNETS = new AtomicInteger();

  /**
   * Pods per node: 64, every address of the pool's four /28 slots, spread as the case that found
   * the gap had them.
   */
  private static final int[] PODS = {30, 10, 6, 6, 4, 4, 2, 2};

  private final KubernetesClient client = ControlPlane.shared().client();
  private final long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("demand");
  private OperatorProcess operator;

  /** kipam-operator, leading; {@code hold} prepares it (a step to hold at) before it starts. */
  private OperatorProcess startOperator(java.util.function.Consumer<OperatorProcess> hold) {
    operator = processes.operator();
    hold.accept(operator);
    operator.startLeading(OPERATOR, WITHIN);
    return operator;
  }

  /** The order in which the pods of the eight nodes make their first ADD. */
  enum Order {
    BIG_NODES_FIRST,
    SMALL_NODES_FIRST,
    INTERLEAVED,
    RANDOM
  }

  /**
   * Acceptance 1: the pods of eight nodes arrive in the given order, each retried every 2 s as a
   * runtime retries a sandbox; every pod holds an address within 60 s of the last pod's first ADD,
   * none held twice. With the big nodes first, five nodes hold no slot and no holder is full: only
   * their recorded demand makes the operator convert slots.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Order.class)
  void everyPodOfAnExactPoolIsServedInAnyOrderThePodsArrive(Order order) throws Exception {
    startOperator(o -> {});
    String pool = pool(Fixtures.uniqueName("demand"));
    List<NodeRig> rigs = processes.nodes(pool, PODS.length, DAEMON);
    System.out.printf("order %s (seed %d)%n", order, seed);
    serveEveryPod(pool, rigs, arrivals(order), WITHIN, "order " + order);
  }

  /** What is SIGKILLed during a demand-driven conversion. */
  enum Kill {
    /** The donor's daemon, after its first sub-claim of the slot, before it writes the mode. */
    DONOR_DAEMON,
    /** kipam-operator, just after it asked the slot to become Shared. */
    OPERATOR
  }

  /**
   * Acceptance 5: the pods of the big nodes first (only demand makes slots Shared), with the
   * donor's daemon or kipam-operator SIGKILLed at its step of a conversion and started again
   * without a hold, as a DaemonSet or Deployment would: every pod is served, none twice.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Kill.class)
  void everyPodIsServedWhenTheDonorOrTheOperatorIsKilledMidConversion(Kill kill) throws Exception {
    String pool = Fixtures.uniqueName("demand");
    startOperator(
        o -> {
          if (kill == Kill.OPERATOR) {
            o.holdAt(OPERATOR_STEP).withEnv(Checkpoint.HOLD_POOL, pool);
          }
        });
    pool(pool);
    List<NodeRig> rigs =
        processes.nodes(
            pool, PODS.length, n -> kill == Kill.DONOR_DAEMON ? heldDaemon(pool, n) : DAEMON);
    RestartHeld restarts =
        new RestartHeld(
            operator,
            kill == Kill.OPERATOR ? OPERATOR_STEP : null,
            rigs,
            kill == Kill.DONOR_DAEMON ? DONOR_STEP : null,
            RESTARTED_WITHIN);
    try (restarts) {
      serveEveryPod(
          pool, rigs, arrivals(Order.BIG_NODES_FIRST), RESTARTED_WITHIN, "killed " + kill);
    }
    System.out.printf(
        "killed %s: kipam-operator %d time(s), donor daemons of %s%n",
        kill, restarts.operatorKills(), restarts.daemonsKilled());
    if (kill == Kill.OPERATOR) {
      assertThat(restarts.operatorKills()).as("operator killed after asking").isEqualTo(1);
    } else {
      assertThat(restarts.daemonsKilled()).as("donors killed mid-conversion").isNotEmpty();
    }
  }

  /**
   * Acceptance 4: a conversion request to a node whose daemon is SIGSTOPped (it stopped just after
   * its first sub-claim of the slot) does not keep the other slots from being converted. Four nodes
   * hold the four slots; the stopped one holds one address, the others three each, so its slot,
   * with the most free addresses, is asked first. A node that never held a slot is served once the
   * request has gone unanswered for 30 s, and the other nodes, and one more newcomer, go on being
   * served; no address is held twice.
   */
  @Test
  void aStoppedDonorDoesNotKeepOtherSlotsFromBeingConverted() throws Exception {
    startOperator(o -> {});
    String pool = pool(Fixtures.uniqueName("demand"));
    NodeRig stopped = processes.node(pool, heldDaemon(pool, 0));
    List<NodeRig> others = processes.nodes(pool, 3, DAEMON);
    assertThat(stopped.add(pool, 0).ok()).isTrue();
    for (NodeRig rig : others) {
      for (int i = 0; i < 3; i++) {
        assertThat(rig.add(pool, i).ok()).isTrue();
      }
    }
    org.awaitility.Awaitility.await()
        .atMost(WITHIN)
        .alias("every slot reports its count")
        .until(
            () ->
                Cluster.blocks(client, pool).stream()
                        .mapToLong(
                            b ->
                                b.getStatus() == null || b.getStatus().getAllocated() == null
                                    ? -100
                                    : b.getStatus().getAllocated())
                        .sum()
                    == 10);
    NodeRig newcomer = processes.node(pool, DAEMON);
    long start = System.nanoTime();
    CniCall.Outcome first = newcomer.add(pool, 0);
    assertThat(first.stdout()).as("short, not exhausted").contains("\"code\":11,");
    stopped.daemon.awaitHeld(DONOR_STEP, WITHIN);
    stopped.daemon.pause();
    try {
      System.out.printf(
          "the donor's daemon on %s is SIGSTOPped after its first sub-claim%n", stopped.node);
      CniCall.Outcome served =
          newcomer.addRetried(List.of(pool), 0, RESTARTED_WITHIN, RuntimeRetries.TRY_AGAIN_LATER);
      assertThat(served.ok()).as(served.stdout() + " (operator log " + operator.log + ")").isTrue();
      System.out.printf(
          "a newcomer was served %.1f s after its first ADD, the donor still stopped%n",
          (System.nanoTime() - start) / 1e9);
      NodeRig second = processes.node(pool, DAEMON);
      for (int i = 0; i < 2; i++) {
        CniCall.Outcome o =
            second.addRetried(List.of(pool), i, WITHIN, RuntimeRetries.TRY_AGAIN_LATER);
        assertThat(o.ok()).as("another newcomer: " + o.stdout()).isTrue();
      }
      for (NodeRig rig : others) {
        CniCall.Outcome o =
            rig.addRetried(List.of(pool), 3, WITHIN, RuntimeRetries.TRY_AGAIN_LATER);
        assertThat(o.ok()).as(rig.node + ": " + o.stdout()).isTrue();
      }
      List<IPAddress> held = Cluster.addresses(client, pool);
      assertThat(held).hasSize(1 + 9 + 1 + 2 + 3);
      assertThat(held.stream().map(a -> a.getSpec().getIp()).distinct())
          .as("no address held twice, across namespaces")
          .hasSize(held.size());
    } finally {
      stopped.daemon.resume();
    }
  }

  /** A daemon's settings that make it hold at {@link #DONOR_STEP} of a conversion of the pool. */
  private Map<String, String> heldDaemon(String pool, int n) {
    Map<String, String> env = new java.util.HashMap<>(DAEMON);
    env.put(Checkpoint.HOLD_AT, DONOR_STEP);
    env.put(Checkpoint.HOLD_POOL, pool);
    env.put(Checkpoint.HOLD_FILE, processes.dir.resolve("held-" + n).toString());
    return env;
  }

  /**
   * Makes each pod's first ADD in the order of {@code arrivals}, then retries the refused ones
   * every 2 s, as a runtime retries a sandbox, until all are served or {@code within} has passed
   * since the last first ADD; every pod holds an address, none twice, each in a block of its node,
   * and no ADD answered "exhausted" (the pool always had a free address).
   */
  private void serveEveryPod(
      String pool, List<NodeRig> rigs, List<int[]> arrivals, Duration within, String what)
      throws Exception {
    List<String> exhausted = java.util.Collections.synchronizedList(new ArrayList<>());
    java.util.function.Predicate<int[]> add =
        pod -> {
          CniCall.Outcome o = rigs.get(pod[0]).add(pool, pod[1]);
          if (o.stdout().contains("\"code\":100,")) {
            exhausted.add(o.stdout());
          }
          return o.ok();
        };
    List<int[]> waiting = new ArrayList<>();
    for (int[] pod : arrivals) {
      if (!add.test(pod)) {
        waiting.add(pod);
      }
    }
    long lastFirstAdd = System.nanoTime();
    System.out.printf(
        "%s: %d of %d pods served at their first ADD%n",
        what, arrivals.size() - waiting.size(), arrivals.size());
    ExecutorService runtimes = Executors.newFixedThreadPool(4);
    try {
      while (!waiting.isEmpty() && System.nanoTime() - lastFirstAdd < within.toNanos()) {
        Thread.sleep(RETRY_EVERY.toMillis());
        List<Future<Boolean>> retries = new ArrayList<>();
        for (int[] pod : waiting) {
          retries.add(runtimes.submit(() -> add.test(pod)));
        }
        List<int[]> still = new ArrayList<>();
        for (int k = 0; k < waiting.size(); k++) {
          if (!retries.get(k).get()) {
            still.add(waiting.get(k));
          }
        }
        waiting = still;
      }
    } finally {
      runtimes.shutdownNow();
    }
    double seconds = (System.nanoTime() - lastFirstAdd) / 1e9;
    System.out.printf(
        "%s: %d of %d pods hold an address %.1f s after the last first ADD%n",
        what, arrivals.size() - waiting.size(), arrivals.size(), seconds);
    assertThat(waiting)
        .as("pods without an address (node, pod); operator log %s", operator.log)
        .isEmpty();
    assertThat(exhausted).as("code 100 while the pool had free addresses").isEmpty();
    assertEveryAddressOnceInABlockOfItsNode(pool, arrivals.size());
    assertThat(Cluster.blocks(client, pool).stream().filter(b -> b.getSpec().getParent() == null))
        .hasSize(4);
  }

  /**
   * Acceptance 3: four nodes hold the pool's four slots, one address each, so every slot is
   * Exclusive and none is full; a fifth node, which never held a slot, is served.
   */
  @Test
  void aNodeThatNeverHeldASlotIsServedWhileNoSlotIsFull() throws Exception {
    startOperator(o -> {});
    String pool = pool(Fixtures.uniqueName("demand"));
    List<NodeRig> holders = new ArrayList<>();
    for (int n = 0; n < 4; n++) {
      NodeRig rig = processes.node(pool, DAEMON);
      assertThat(rig.add(pool, n).ok()).isTrue();
      holders.add(rig);
    }
    NodeRig newcomer = processes.node(pool, DAEMON);
    long start = System.nanoTime();
    CniCall.Outcome first = newcomer.add(pool, 4);
    assertThat(first.stdout())
        .as("no slot it can reach yet, while the pool has free addresses: try again")
        .contains("\"code\":11,")
        .contains("free addresses, none of them reachable from node");

    CniCall.Outcome served =
        newcomer.addRetried(List.of(pool), 4, WITHIN, RuntimeRetries.TRY_AGAIN_LATER);

    assertThat(served.ok()).as(served.stdout() + " (operator log " + operator.log + ")").isTrue();
    System.out.printf(
        "a node that never held a slot got %s %.1f s after its first ADD%n",
        served.ip(), (System.nanoTime() - start) / 1e9);
    org.awaitility.Awaitility.await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(client.nodes().withName(newcomer.node).get().getMetadata())
                    .as("its demand is withdrawn once it is served")
                    .satisfies(
                        m ->
                            assertThat(
                                    m.getAnnotations() == null
                                        ? null
                                        : m.getAnnotations().get(ApiConstants.ANNOTATION_DEMAND))
                                .isNull()));
    assertEveryAddressOnceInABlockOfItsNode(pool, 5);
  }

  /**
   * Creates the pool {@code pool}: 64 addresses in four /28 slots, every one assignable (a /25
   * whose range, .16 to .79, leaves its network and broadcast addresses out of every slot).
   */
  private String pool(String pool) {
    String prefix = "10.208." + SUBNETS.incrementAndGet() + ".";
    IPPoolSpec spec = Cluster.spec(prefix + "0/25", 28, 0);
    spec.setRangeStart(prefix + "16");
    spec.setRangeEnd(prefix + "79");
    Cluster.poolReadiedByOperator(client, pool, spec);
    return pool;
  }

  /** Every pod's first ADD, as {node, pod}, in {@code order}. */
  private List<int[]> arrivals(Order order) {
    List<int[]> pods = new ArrayList<>();
    switch (order) {
      case BIG_NODES_FIRST, RANDOM -> {
        for (int n = 0; n < PODS.length; n++) {
          for (int i = 0; i < PODS[n]; i++) {
            pods.add(new int[] {n, i});
          }
        }
      }
      case SMALL_NODES_FIRST -> {
        for (int n = PODS.length - 1; n >= 0; n--) {
          for (int i = 0; i < PODS[n]; i++) {
            pods.add(new int[] {n, i});
          }
        }
      }
      case INTERLEAVED -> {
        for (int i = 0; i < PODS[0]; i++) {
          for (int n = 0; n < PODS.length; n++) {
            if (i < PODS[n]) {
              pods.add(new int[] {n, i});
            }
          }
        }
      }
    }
    if (order == Order.RANDOM) {
      Collections.shuffle(pods, new Random(seed));
    }
    return pods;
  }

  /** As {@link PoolAssertions#everyAddressOnceInABlockOfItsNode}, held in all three namespaces. */
  private void assertEveryAddressOnceInABlockOfItsNode(String pool, int expected) {
    PoolAssertions.everyAddressOnceInABlockOfItsNode(client, pool, expected);
    assertThat(
            Cluster.addresses(client, pool).stream()
                .map(a -> a.getMetadata().getNamespace())
                .distinct())
        .hasSize(3);
  }
}
