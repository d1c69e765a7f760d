package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.PlayedOperator;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The node daemon's half of the block release handshake on the real API server, with the test
 * playing kipam-operator: an empty block is answered Ready, one in use Refused, and no address is
 * handed out from a block whose release is Requested or Ready, also by a daemon SIGKILLed and
 * started again meanwhile. Pods are spread over three namespaces.
 *
 * <p>Why the operator is played here: each test provokes one exact message of the protocol (a
 * request in a given state, a round cleared, a delete) and checks the daemon's answer to it. A
 * running kipam-operator would act on those answers itself; {@code BlockLifecycleIT} and {@code
 * HandshakeKillMatrixIT} run both real halves. So this test also marks its pools Ready itself.
 */
class ReleaseProtocolWithPlayedOperatorIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static NodeRig rig;
  private static String bootPool;
  private static int pools;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final PlayedOperator operator = new PlayedOperator(client);

  @BeforeAll
  static void start(KubernetesClient client) throws Exception {
    bootPool = Fixtures.uniqueName("boot");
    Cluster.readyPool(client, bootPool, Cluster.spec("10.247.255.0/24", 28, 0));
    rig = NodeRig.startAlone(client, "release", bootPool);
  }

  @AfterAll
  static void stop() throws Exception {
    Close.all(rig);
  }

  /** A pool of its own for each test: 16-address blocks in a /24. */
  private String pool() {
    String pool = Fixtures.uniqueName("rel");
    Cluster.readyPool(client, pool, Cluster.spec("10.247." + pools++ + ".0/24", 28, 0));
    return pool;
  }

  private String blockOf(String pool, String ip) {
    return rig.blockOf(pool, ip).orElseThrow().getMetadata().getName();
  }

  private BlockRelease awaitAnswer(String block, ReleaseState state) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(operator.state(block))
                    .as("release of %s (daemon log: %s)", block, rig.daemon.log)
                    .isEqualTo(state));
    return operator.block(block).getStatus().getRelease();
  }

  /** Pod 0's address added and deleted again: the block it came from, now empty. */
  private String emptiedBlock(String pool) {
    String ip = rig.add(pool, 0).ip();
    String block = blockOf(pool, ip);
    assertThat(rig.del(pool, 0).ok()).isTrue();
    return block;
  }

  /** Pods 1 to 3 get addresses of {@code pool}, none of them in {@code block}. */
  private void podsOneToThreeOutside(IPBlock block, String pool) {
    for (int i = 1; i <= 3; i++) {
      assertThat(inBlock(block, rig.add(pool, i).ip())).as("pod %s", i).isFalse();
    }
  }

  private static boolean inBlock(IPBlock block, String ip) {
    return Cidr.parse(block.getSpec().getCidr()).contains(IpAddress.parse(ip));
  }

  @Test
  void anEmptyBlockIsAnsweredReadyAndNothingIsAllocatedFromItUntilItIsGone() {
    String pool = pool();
    String block = emptiedBlock(pool);

    String round = operator.request(block);
    BlockRelease answer = awaitAnswer(block, ReleaseState.Ready);

    assertThat(answer.getRequestedAt()).isEqualTo(round);
    assertThat(answer.getRespondedAt()).isNotBlank();
    podsOneToThreeOutside(operator.block(block), pool);
    operator.delete(block);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> client.resources(IPBlock.class).withName(block).get() == null);
    assertThat(rig.add(pool, 4).ok()).isTrue();
  }

  @Test
  void aBlockInUseIsRefusedNamingHowManyAddressesAndIsUsedAgain() {
    String pool = pool();
    String first = rig.add(pool, 0).ip();
    rig.add(pool, 1).ip();
    rig.add(pool, 2).ip();
    String block = blockOf(pool, first);

    String round = operator.request(block);
    BlockRelease answer = awaitAnswer(block, ReleaseState.Refused);

    assertThat(answer.getRequestedAt()).isEqualTo(round);
    assertThat(answer.getReason()).startsWith("3 of its addresses are in use on node " + rig.node);
    assertThat(inBlock(operator.block(block), rig.add(pool, 3).ip()))
        .as("a refused block is open again")
        .isTrue();
  }

  @Test
  void aDaemonKilledWhileABlockIsReadyNeverAllocatesFromItAfterItsRestart() throws Exception {
    String pool = pool();
    String block = emptiedBlock(pool);
    operator.request(block);
    String respondedAt = awaitAnswer(block, ReleaseState.Ready).getRespondedAt();

    rig.restart();

    podsOneToThreeOutside(operator.block(block), pool);
    assertThat(operator.block(block).getStatus().getRelease().getRespondedAt())
        .isEqualTo(respondedAt);
  }

  /**
   * The block is Requested while the daemon is down, and kept Requested after its start by changing
   * the block all the time (each answer the daemon writes meets a new resourceVersion, most of them
   * 409): from its first sync, the daemon allocates from other blocks.
   */
  @Test
  void aDaemonStartedWhileABlockIsRequestedKeepsItClosedFromItsFirstSync() throws Exception {
    String pool = pool();
    String block = emptiedBlock(pool);

    rig.daemon.kill();
    String round = operator.request(block);
    AtomicBoolean touching = new AtomicBoolean(true);
    Thread toucher =
        new Thread(
            () -> {
              for (int n = 0; touching.get(); n++) {
                try {
                  operator.touch(block, n);
                  Thread.sleep(20);
                } catch (Exception e) {
                  return;
                }
              }
            });
    toucher.start();
    try {
      rig.daemon.start();
      rig.daemon.awaitReady(rig.kipam, bootPool);
      podsOneToThreeOutside(operator.block(block), pool);
    } finally {
      touching.set(false);
      toucher.join();
    }

    BlockRelease answer = awaitAnswer(block, ReleaseState.Ready);
    assertThat(answer.getRequestedAt()).isEqualTo(round);
  }

  @Test
  void aClearedReleaseOpensTheBlockAgain() {
    String pool = Fixtures.uniqueName("rel");
    var spec = Cluster.spec("10.247." + pools++ + ".0/24", 28, 0);
    spec.setMaxBlocksPerNode(1);
    Cluster.readyPool(client, pool, spec);
    String block = emptiedBlock(pool);
    operator.request(block);
    awaitAnswer(block, ReleaseState.Ready);
    // Its one block is Ready and spec.maxBlocksPerNode allows no other: nothing to allocate from.
    assertThat(rig.add(pool, 1).stdout()).contains("\"code\":100");

    operator.clear(block);

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(inBlock(operator.block(block), rig.add(pool, 1).ip()))
                    .as("the address is from the block released no more")
                    .isTrue());
  }
}
