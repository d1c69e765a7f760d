package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.PlayedOperator;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The paths where a block could leave its node with a live address, or stay closed for good, with
 * the real halves on both sides: kipam-operator as its own process and kipam-node processes driven
 * through the installed executable, pods spread over three namespaces. Each test asserts on API
 * objects and CNI results. A round that no operator comes back to is {@link ReleaseAbandonIT}'s.
 */
class BlockLifecycleIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Map<String, String> DAEMON =
      Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1", "KIPAM_RELEASE_ABANDON_SECONDS", "6");
  private static int subnets;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final PlayedOperator played = new PlayedOperator(client);
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("life");

  private OperatorProcess operator(Map<String, String> env) throws Exception {
    return processes.leadingOperator(env, WITHIN);
  }

  private NodeRig node(String pool) throws Exception {
    return processes.node(pool, DAEMON);
  }

  /** A pool created as an administrator creates it; the operator marks it Ready. */
  private String pool(String cidr, int blockSize, int reuseDelaySeconds) {
    String name =
        Cluster.readiedPool(client, "life", Cluster.spec(cidr, blockSize, reuseDelaySeconds));
    return name;
  }

  private static String subnet() {
    return "10.246." + subnets++;
  }

  private IPBlock block(String name) {
    return client.resources(IPBlock.class).withName(name).get();
  }

  private static boolean inBlock(IPBlock block, String ip) {
    return Cidr.parse(block.getSpec().getCidr()).contains(IpAddress.parse(ip));
  }

  private static int code(CniCall.Outcome outcome) throws Exception {
    return new ObjectMapper().readTree(outcome.stdout()).path("code").asInt();
  }

  @Test
  void aBlockDeletedByHandWithALiveAddressIsClaimedByNoOtherNodeAndGoesWhenEmpty()
      throws Exception {
    OperatorProcess operator = operator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"));
    String pool = pool(subnet() + ".0/26", 28, 0);
    NodeRig a = node(pool);
    NodeRig b = node(pool);
    String held = a.add(pool, 0).ip();
    String name = a.blockOf(pool, held).orElseThrow().getMetadata().getName();

    client.resources(IPBlock.class).withName(name).delete();

    await().atMost(WITHIN).until(() -> block(name).getMetadata().getDeletionTimestamp() != null);
    IPBlock deleting = block(name);
    for (int i = 1; i <= 4; i++) {
      assertThat(inBlock(deleting, a.add(pool, i).ip()))
          .as("node a allocates nothing from its block being deleted (log %s)", a.daemon.log)
          .isFalse();
      assertThat(inBlock(deleting, b.add(pool, i).ip()))
          .as("node b cannot claim the slot of a block being deleted")
          .isFalse();
    }
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(() -> block(name) != null);

    assertThat(a.del(pool, 0).ok()).isTrue();

    await()
        .atMost(WITHIN)
        .alias("given back once empty (operator log " + operator.log + ")")
        .until(() -> block(name) == null);
  }

  @Test
  void aDaemonWhoseNodeObjectIsGoneAllocatesNothingUntilItIsRegisteredAgain() throws Exception {
    operator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600", "KIPAM_NODE_GONE_GRACE_SECONDS", "600"));
    String pool = pool(subnet() + ".0/24", 28, 0);
    NodeRig a = node(pool);
    String held = a.add(pool, 0).ip();
    String name = a.blockOf(pool, held).orElseThrow().getMetadata().getName();

    client.nodes().withName(a.node).delete();

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              CniCall.Outcome refused = a.add(pool, 1);
              assertThat(refused.ok()).as(refused.stdout()).isFalse();
              assertThat(code(refused)).as(refused.stdout()).isEqualTo(11);
              assertThat(refused.stdout()).contains("does not exist");
            });
    // The operator asked for the block at once; the daemon refused, an address being live in it.
    await().atMost(WITHIN).until(() -> played.state(name) == ReleaseState.Refused);
    assertThat(block(name)).isNotNull();

    Fixtures.registerNode(client, a.node);

    await().atMost(WITHIN).until(() -> a.add(pool, 2).ok());
    assertThat(block(name)).isNotNull();
  }

  @Test
  void anAddressReleasedOnOneNodeIsHandedOutOnAnotherOnlyAfterTheReuseDelay() throws Exception {
    operator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "1"));
    int reuseDelay = 15;
    // One block of two assignable addresses: the only way to node b is the block's move.
    String pool = pool(subnet() + ".0/30", 30, reuseDelay);
    NodeRig a = node(pool);
    NodeRig b = node(pool);
    List<String> released = List.of(a.add(pool, 0).ip(), a.add(pool, 1).ip());
    String name = a.blocks(pool).get(0).getMetadata().getName();

    assertThat(a.del(pool, 0).ok()).isTrue();
    assertThat(a.del(pool, 1).ok()).isTrue();
    Instant releasedAt = Instant.now();

    String got =
        await()
            .atMost(Duration.ofSeconds(reuseDelay + 60))
            .pollInterval(Duration.ofMillis(500))
            .until(() -> b.ipOrNull(pool, 0), ip -> ip != null);
    Instant gotAt = Instant.now();

    assertThat(released).contains(got);
    assertThat(Duration.between(releasedAt, gotAt))
        .as("address %s released on node a, handed out on node b", got)
        .isGreaterThanOrEqualTo(Duration.ofSeconds(reuseDelay));
    assertThat(block(name))
        .as("the block moved: a new object of the same slot")
        .satisfiesAnyOf(
            blk -> assertThat(blk).isNull(),
            blk -> assertThat(blk.getSpec().getNode()).isEqualTo(b.node));
  }

  @Test
  void hostPrefixBlocksAreNotAskedForBeforeTheirDaemonHasReportedThem() throws Exception {
    OperatorProcess operator = operator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "0"));
    String pool = pool(subnet() + ".0/26", 32, 0);
    NodeRig a = node(pool);
    for (int i = 0; i < 12; i++) {
      assertThat(a.add(pool, i).ok()).isTrue();
    }

    // Every block holds a live address: none may be asked for, however short the idle delay.
    await()
        .during(Duration.ofSeconds(8))
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(a.blocks(pool))
                    .as("operator log %s", operator.log)
                    .hasSize(12)
                    .allSatisfy(
                        blk ->
                            assertThat(
                                    blk.getStatus() == null ? null : blk.getStatus().getRelease())
                                .isNull()));
    assertThat(requestEvents(pool)).isEmpty();
  }

  /** ReleaseRequested Events about the blocks of {@code pool}. */
  private List<Event> requestEvents(String pool) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> "ReleaseRequested".equals(e.getReason()))
        .filter(e -> e.getInvolvedObject().getName().startsWith(pool + "."))
        .toList();
  }
}
