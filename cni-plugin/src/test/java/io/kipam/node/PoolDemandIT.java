package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Demand is visible (design §5a): a node whose ADD finds the pool short records it on its Node
 * ({@code kipam.io/demand}), and kipam-operator converts a slot to Shared for it even when the node
 * holds no slot at all and no slot is full. Real kube-apiserver, kipam-operator and kipam-node
 * processes; pods over three namespaces; slots claimed Exclusive only ({@code KIPAM_SHARED_SLOTS}
 * off), no idle moves.
 */
@WithControlPlane
class PoolDemandIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Duration RETRY_EVERY = Duration.ofSeconds(2);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");
  private static final AtomicInteger SUBNETS = new AtomicInteger();

  /**
   * Pods per node: 62, every assignable address of a /26 in four /28 slots (its network and
   * broadcast address are not assignable).
   */
  private static final int[] PODS = {28, 10, 6, 6, 4, 4, 2, 2};

  private final ControlPlane controlPlane;
  private final KubernetesClient client;
  private final long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
  private KipamProcesses processes;
  private OperatorProcess operator;

  PoolDemandIT(ControlPlane controlPlane, KubernetesClient client) {
    this.controlPlane = controlPlane;
    this.client = client;
  }

  @BeforeAll
  static void installCrds(KubernetesClient client) {
    KipamCrds.install(client);
  }

  @BeforeEach
  void setUp() throws Exception {
    processes = new KipamProcesses(controlPlane, client, "demand");
    operator = processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
  }

  @AfterEach
  void stopAll() throws Exception {
    processes.close();
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
    String pool = pool();
    List<NodeRig> rigs = new ArrayList<>();
    for (int n = 0; n < PODS.length; n++) {
      rigs.add(processes.node(pool, DAEMON));
    }
    List<int[]> arrivals = arrivals(order);
    System.out.printf("order %s (seed %d)%n", order, seed);

    List<int[]> waiting = new ArrayList<>();
    for (int[] pod : arrivals) {
      if (!rigs.get(pod[0]).add(pool, pod[1]).ok()) {
        waiting.add(pod);
      }
    }
    long lastFirstAdd = System.nanoTime();
    System.out.printf(
        "%d of %d pods served at their first ADD%n", arrivals.size() - waiting.size(), 62);
    ExecutorService runtimes = Executors.newFixedThreadPool(4);
    try {
      while (!waiting.isEmpty() && System.nanoTime() - lastFirstAdd < WITHIN.toNanos()) {
        Thread.sleep(RETRY_EVERY.toMillis());
        List<Future<Boolean>> retries = new ArrayList<>();
        for (int[] pod : waiting) {
          retries.add(runtimes.submit(() -> rigs.get(pod[0]).add(pool, pod[1]).ok()));
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
        "order %s: %d of 62 pods hold an address %.1f s after the last first ADD%n",
        order, 62 - waiting.size(), seconds);
    assertThat(waiting)
        .as("pods without an address (node, pod); operator log %s", operator.log)
        .isEmpty();
    assertEveryAddressOnceInABlockOfItsNode(pool, 62);
    assertThat(Cluster.blocks(client, pool).stream().filter(b -> b.getSpec().getParent() == null))
        .hasSize(4);
  }

  /**
   * Acceptance 3: four nodes hold the pool's four slots, one address each, so every slot is
   * Exclusive and none is full; a fifth node, which never held a slot, is served.
   */
  @Test
  void aNodeThatNeverHeldASlotIsServedWhileNoSlotIsFull() throws Exception {
    String pool = pool();
    List<NodeRig> holders = new ArrayList<>();
    for (int n = 0; n < 4; n++) {
      NodeRig rig = processes.node(pool, DAEMON);
      assertThat(rig.add(pool, n).ok()).isTrue();
      holders.add(rig);
    }
    NodeRig newcomer = processes.node(pool, DAEMON);
    long start = System.nanoTime();
    CniCall.Outcome first = newcomer.add(pool, 4);
    assertThat(first.stdout()).as("no slot it can reach yet").contains("\"code\":100,");

    CniCall.Outcome served = newcomer.addRetried(List.of(pool), 4, WITHIN);

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

  private String pool() {
    String pool = Fixtures.uniqueName("demand");
    Cluster.poolReadiedByOperator(
        client, pool, Cluster.spec("10.208." + SUBNETS.incrementAndGet() + ".0/26", 28, 0));
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

  private void assertEveryAddressOnceInABlockOfItsNode(String pool, int expected) {
    List<IPAddress> held = Cluster.addresses(client, pool);
    Set<String> ips = new HashSet<>();
    held.forEach(a -> ips.add(a.getSpec().getIp()));
    assertThat(held).hasSize(expected);
    assertThat(ips).as("no address held twice, across namespaces").hasSize(expected);
    assertThat(held.stream().map(a -> a.getMetadata().getNamespace()).distinct()).hasSize(3);
    List<IPBlock> blocks = Cluster.blocks(client, pool);
    for (IPAddress address : held) {
      IpAddress ip = IpAddress.parse(address.getSpec().getIp());
      assertThat(blocks)
          .as("%s lies in a block of its node %s", ip, address.getSpec().getNode())
          .anyMatch(b -> Cluster.holds(b, ip, address.getSpec().getNode()));
    }
  }
}
