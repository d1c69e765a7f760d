package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's half of the block release handshake, with this test in the node daemon's role (its
 * answers written as the daemon writes them): an idle block is asked for, only a fresh Ready with
 * no IPAddress left lets it go, a refusal is cleared after the back-off, and a restarted operator
 * never deletes without a Ready. Also: a deleted Node's blocks go once unused.
 *
 * <p>Why the daemon is played: this module tests the operator alone, and each test needs one exact
 * report or answer of a node daemon (a count, a {@code Ready} for a given round) at one exact
 * moment, which {@code reportAllocated} and {@code answer} write as the daemon writes them. With
 * real kipam-node processes, {@code HandshakeKillMatrixIT} and {@code BlockLifecycleIT} in the node
 * module run the same handshake.
 */
@WithControlPlane(crds = true)
class ReleaseProtocolWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static final AtomicInteger SUBNET = new AtomicInteger();
  private static final Map<String, String> SETTINGS =
      Map.of(
          "KIPAM_BLOCK_IDLE_SECONDS", "2",
          "KIPAM_RELEASE_RETRY_SECONDS", "3",
          "KIPAM_RECHECK_SECONDS", "1");

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = controlPlane.client();
  private final Kipam kipam = new Kipam(client);
  private final String node = Fixtures.uniqueName("node");
  private RunningOperator operator;

  ReleaseProtocolWithPlayedDaemonIT() throws Exception {
    Fixtures.registerNode(client, node);
    this.operator = RunningOperator.start(controlPlane, SETTINGS);
  }

  @AfterEach
  void stopOperator() {
    if (operator != null) {
      operator.close();
    }
  }

  /**
   * A Ready pool of its own (10.60.n.0/24, blocks of /28) and one block of it on the node, reported
   * empty.
   */
  private IPBlock pooledBlock(String prefix) {
    String name = Fixtures.uniqueName(prefix);
    int n = SUBNET.incrementAndGet();
    IPPool pool = kipam.checkedPool(name, "10.60." + n + ".0/24", WITHIN);
    IPBlock block = kipam.claimReported(pool, "10.60." + n + ".16/28", node, 0);
    return block;
  }

  /**
   * {@code block} gets an Event {@code reason} and stays (3 s seen) while {@code address} exists;
   * once it is deleted, the block goes.
   */
  private void staysWithEventUntilItsAddressGoes(IPBlock block, String reason, IPAddress address) {
    String name = block.getMetadata().getName();
    await().atMost(WITHIN).until(() -> kipam.eventReasons(name).contains(reason));
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(() -> kipam.block(name) != null);

    kipam.delete(address);

    await().atMost(WITHIN).until(() -> kipam.block(name) == null);
  }

  private BlockRelease release(IPBlock block) {
    IPBlock current = kipam.block(block.getMetadata().getName());
    return current == null || current.getStatus() == null ? null : current.getStatus().getRelease();
  }

  private BlockRelease awaitRequested(IPBlock block) {
    await()
        .atMost(WITHIN)
        .until(() -> release(block) != null && release(block).getState() == ReleaseState.Requested);
    return release(block);
  }

  @Test
  void anIdleBlockIsAskedFor() {
    IPBlock block = pooledBlock("idle");

    BlockRelease release = awaitRequested(block);

    assertThat(release.getRequestedAt()).isNotBlank();
    assertThat(release.getReason()).contains("empty");
    assertThat(release.getRespondedAt()).isNull();
    await()
        .atMost(WITHIN)
        .until(
            () -> kipam.eventReasons(block.getMetadata().getName()).contains("ReleaseRequested"));
  }

  @Test
  void aBlockInUseIsNotAskedFor() {
    IPBlock block = pooledBlock("busy");
    kipam.reportAllocated(block.getMetadata().getName(), 3);

    await()
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(10))
        .until(() -> release(block) == null);
  }

  @Test
  void aReadyAnswerWithNoAddressLeftReleasesTheBlock() throws Exception {
    IPBlock block = pooledBlock("ready");
    awaitRequested(block);

    kipam.answer(block.getMetadata().getName(), ReleaseState.Ready, "empty");

    await().atMost(WITHIN).until(() -> kipam.block(block.getMetadata().getName()) == null);
    await()
        .atMost(WITHIN)
        .until(() -> kipam.eventReasons(block.getMetadata().getName()).contains("Released"));
    assertThat(operator.metric("kipam_block_releases_total{outcome=\"released\"}")).isEqualTo(1);
  }

  @Test
  void aReadyAnswerIsNotEnoughWhileAnAddressOfTheBlockExists() {
    IPBlock block = pooledBlock("held");
    awaitRequested(block);
    String namespace = Fixtures.namespace(client, "held");
    IPAddress address = kipam.allocate(namespace, block, Kipam.addressIn(block, 4));

    kipam.answer(block.getMetadata().getName(), ReleaseState.Ready, "empty");

    staysWithEventUntilItsAddressGoes(block, "ReleaseBlocked", address);
  }

  @Test
  void aRefusedBlockStaysAndItsReleaseIsClearedAfterTheBackOff() {
    IPBlock block = pooledBlock("refused");
    String round = awaitRequested(block).getRequestedAt();

    kipam.answer(block.getMetadata().getName(), ReleaseState.Refused, "2 addresses in use");

    await()
        .atMost(WITHIN)
        .until(() -> kipam.eventReasons(block.getMetadata().getName()).contains("ReleaseRefused"));
    // Cleared after the back-off; then, the block being empty, a later round may ask again.
    await()
        .atMost(WITHIN)
        .until(
            () -> {
              BlockRelease release = release(block);
              return release == null || !round.equals(release.getRequestedAt());
            });
    assertThat(kipam.block(block.getMetadata().getName())).isNotNull();
    BlockRelease next = awaitRequested(block);
    assertThat(next.getRequestedAt()).isNotEqualTo(round);
  }

  @Test
  void anOperatorRestartedBetweenRequestedAndReadyDeletesOnlyOnReady() throws Exception {
    IPBlock block = pooledBlock("restart");
    String round = awaitRequested(block).getRequestedAt();

    operator.close();
    operator = RunningOperator.start(controlPlane, SETTINGS);
    await().atMost(WITHIN).until(() -> operator.get("/readyz").statusCode() == 200);

    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(kipam.block(block.getMetadata().getName())).isNotNull();
              assertThat(release(block).getState()).isEqualTo(ReleaseState.Requested);
              assertThat(release(block).getRequestedAt()).isEqualTo(round);
            });

    kipam.answer(block.getMetadata().getName(), ReleaseState.Ready, "empty");

    await().atMost(WITHIN).until(() -> kipam.block(block.getMetadata().getName()) == null);
  }

  @Test
  void aReadyAnsweredWhileNoOperatorRanIsActedOnOnlyAfterFreshChecks() throws Exception {
    IPBlock block = pooledBlock("away");
    awaitRequested(block);
    operator.close();

    // While no operator runs: the daemon answers Ready, and an address of the block appears.
    kipam.answer(block.getMetadata().getName(), ReleaseState.Ready, "empty");
    String namespace = Fixtures.namespace(client, "away");
    IPAddress address = kipam.allocate(namespace, block, Kipam.addressIn(block, 6));
    operator = RunningOperator.start(controlPlane, SETTINGS);

    await()
        .atMost(WITHIN)
        .until(() -> kipam.eventReasons(block.getMetadata().getName()).contains("ReleaseBlocked"));
    assertThat(kipam.block(block.getMetadata().getName())).isNotNull();

    kipam.delete(address);

    await().atMost(WITHIN).until(() -> kipam.block(block.getMetadata().getName()) == null);
  }

  @Test
  void aBlockOfADeletedNodeGoesWhenNoAddressReferencesIt() {
    IPBlock block = pooledBlock("gone");
    // An allocation keeps it from being asked for while the test looks at the node rule alone.
    kipam.reportAllocated(block.getMetadata().getName(), 1);

    client.nodes().withName(node).delete();

    await().atMost(WITHIN).until(() -> kipam.block(block.getMetadata().getName()) == null);
    assertThat(kipam.eventReasons(block.getMetadata().getName())).contains("NodeGone");
  }

  @Test
  void aBlockOfADeletedNodeStaysWhileAnAddressReferencesIt() {
    IPBlock block = pooledBlock("orphan");
    kipam.reportAllocated(block.getMetadata().getName(), 1);
    String namespace = Fixtures.namespace(client, "orphan");
    IPAddress address = kipam.allocate(namespace, block, Kipam.addressIn(block, 5));

    client.nodes().withName(node).delete();

    staysWithEventUntilItsAddressGoes(block, "NodeGone", address);
  }
}
