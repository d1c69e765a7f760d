package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A pool's status and the moves of blocks under pressure, with both real halves: kipam-operator as
 * its own process and kipam-node processes driven through the installed executable, pods in three
 * namespaces. The counts come from what the daemons allocated, not from a test's report.
 */
class PoolStatusAndPressureIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");
  private static int subnets;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("poolst");

  private OperatorProcess operator(String idleSeconds) {
    return processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", idleSeconds), WITHIN);
  }

  private NodeRig node(String pool) throws Exception {
    return processes.node(pool, DAEMON);
  }

  private String pool(String suffix, int blockSize) {
    String name = Fixtures.uniqueName("poolst");
    Cluster.poolReadiedByOperator(
        client, name, Cluster.spec("10.208." + subnets++ + suffix, blockSize, 0));
    return name;
  }

  private IPPoolStatus status(String pool) {
    return client.resources(IPPool.class).withName(pool).get().getStatus();
  }

  private String condition(String pool, String type) {
    return status(pool).getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .map(Condition::getStatus)
        .findFirst()
        .orElse("");
  }

  private static String ipOf(CniCall.Outcome outcome) {
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    return outcome.ip();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#blockStatus")
  void statusCountsWhatTheDaemonsAllocatedAndFollowsTheirReleases(Map<String, String> blockStatus)
      throws Exception {
    OperatorProcess operator = operator("3600");
    String pool = pool(".0/24", 28);
    NodeRig a = processes.node(pool, blockStatus);
    NodeRig b = processes.node(pool, blockStatus);
    for (int i = 0; i < 5; i++) {
      ipOf(a.add(pool, i));
    }
    for (int i = 0; i < 3; i++) {
      ipOf(b.add(pool, i));
    }

    await()
        .atMost(WITHIN)
        .alias("pool counts (operator log " + operator.log + ")")
        .untilAsserted(
            () -> {
              IPPoolStatus status = status(pool);
              assertThat(status.getAllocated()).isEqualTo(8);
              assertThat(status.getBlocks()).isEqualTo(2);
              assertThat(status.getCapacity()).isEqualTo("254");
              assertThat(status.getAvailable()).isEqualTo("246");
            });

    for (int i = 0; i < 5; i++) {
      assertThat(a.del(pool, i).ok()).isTrue();
    }
    await().atMost(WITHIN).until(() -> status(pool).getAllocated() == 3);
  }

  /**
   * {@code maxBlocksPerNode} lowered below what a node holds: kipam-operator reports the node (a
   * Warning Event {@code OverBlockLimit} on the pool) and asks back at once, without the idle
   * delay, its empty blocks beyond the limit; the block that holds an address stays, and so does
   * the address. Which pods are released is drawn from a printed seed.
   */
  @Test
  void aNodeOverALoweredBlockLimitIsReportedAndGivesBackItsEmptyBlocks() throws Exception {
    operator("3600");
    String pool = pool(".0/24", 29);
    NodeRig a = node(pool);
    long seed = System.nanoTime();
    java.util.Random random = new java.util.Random(seed);
    Map<Integer, String> ips = new java.util.HashMap<>();
    for (int i = 0; i < 20; i++) {
      ips.put(i, ipOf(a.add(pool, i)));
    }
    int blocks = a.blocks(pool).size();
    assertThat(blocks).as("20 addresses in /29 blocks").isGreaterThanOrEqualTo(3);
    int kept = random.nextInt(20);
    System.out.printf("seed %d: %d blocks, pod %d kept%n", seed, blocks, kept);
    for (int i = 0; i < 20; i++) {
      if (i != kept) {
        assertThat(a.del(pool, i).ok()).isTrue();
      }
    }
    await()
        .atMost(WITHIN)
        .alias("every block reports its count")
        .until(
            () ->
                a.blocks(pool).stream()
                        .mapToLong(
                            b ->
                                b.getStatus() == null || b.getStatus().getAllocated() == null
                                    ? 100
                                    : b.getStatus().getAllocated())
                        .sum()
                    == 1);

    Fixtures.mergePatch(
        client.resources(IPPool.class).withName(pool),
        Map.of("spec", Map.of("maxBlocksPerNode", 1)));

    await()
        .atMost(WITHIN)
        .alias("the empty blocks beyond the limit go back")
        .untilAsserted(() -> assertThat(a.blocks(pool)).hasSize(1));
    assertThat(a.blocks(pool).get(0).getStatus().getAllocated()).isEqualTo(1L);
    assertThat(Cluster.addresses(client, pool))
        .singleElement()
        .satisfies(address -> assertThat(address.getSpec().getIp()).isEqualTo(ips.get(kept)));
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(
                        client.v1().events().inNamespace("default").list().getItems().stream()
                            .filter(e -> "OverBlockLimit".equals(e.getReason()))
                            .filter(e -> pool.equals(e.getInvolvedObject().getName()))
                            .map(io.fabric8.kubernetes.api.model.Event::getMessage))
                    .contains(
                        "node "
                            + a.node
                            + " holds "
                            + blocks
                            + " blocks of pool "
                            + pool
                            + ", over its spec.maxBlocksPerNode (1); its empty blocks beyond it are"
                            + " taken back"));
    ipOf(a.add(pool, 100));
  }

  @Test
  void exhaustedTurnsOnWhenTheDaemonsTakeTheLastAddressAndOffWhenOneComesBack() throws Exception {
    operator("3600");
    // Two assignable addresses in one block.
    String pool = pool(".0/30", 30);
    NodeRig a = node(pool);
    ipOf(a.add(pool, 0));
    ipOf(a.add(pool, 1));

    await().atMost(WITHIN).until(() -> condition(pool, "Exhausted").equals("True"));
    assertThat(status(pool).getAvailable()).isEqualTo("0");
    CniCall.Outcome third = CniCall.whileTryAgain(() -> a.add(pool, 2), WITHIN);
    assertThat(third.stdout()).as("nothing left").contains("\"code\":100,");

    assertThat(a.del(pool, 1).ok()).isTrue();
    await().atMost(WITHIN).until(() -> condition(pool, "Exhausted").equals("False"));
    assertThat(status(pool).getAvailable()).isEqualTo("1");
  }

  @Test
  void aNodeWithAFullBlockGetsTheIdleBlockOfAnotherNodeWhenNoSlotIsLeft() throws Exception {
    OperatorProcess operator = operator("3600");
    // Two blocks of 15 assignable addresses each.
    String pool = pool(".0/27", 28);
    NodeRig a = node(pool);
    NodeRig b = node(pool);
    String idleCidr = a.blockOf(pool, ipOf(a.add(pool, 0))).orElseThrow().getSpec().getCidr();
    assertThat(a.del(pool, 0).ok()).isTrue();
    Set<String> held = new HashSet<>();
    for (int i = 0; i < 15; i++) {
      held.add(ipOf(b.add(pool, i)));
    }
    assertThat(held).hasSize(15);

    String moved =
        await()
            .atMost(WITHIN)
            .alias(
                "node b gets an address of node a's idle block (operator log " + operator.log + ")")
            .pollInterval(Duration.ofMillis(500))
            .until(() -> b.ipOrNull(pool, 15), ip -> ip != null);

    assertThat(held).doesNotContain(moved);
    assertThat(Cidr.parse(idleCidr).contains(IpAddress.parse(moved))).isTrue();
    assertThat(b.blockOf(pool, moved)).as("the slot is node b's now").isPresent();
    assertThat(a.blocks(pool)).isEmpty();
  }
}
