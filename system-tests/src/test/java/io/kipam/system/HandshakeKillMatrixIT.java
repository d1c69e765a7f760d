package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.runtime.Checkpoint;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The release handshake with either side SIGKILLed at each of its steps and started again: the idle
 * block is never deleted without a Ready answer to its round, no address is held twice, and no
 * block stays closed. kipam-operator and kipam-node run as their own processes; each is stopped at
 * an exact step by the {@link Checkpoint} hook ({@code KIPAM_HOLD_AT}), never by sleeping.
 *
 * <p>Each case: one node holding a busy block (addresses in three namespaces) and a second block
 * emptied by DEL, which the operator asks for once it has been idle for three seconds. The side
 * that owns the step is held there; the other side, when it is the one killed, is SIGKILLed and
 * started again while the first is held, and then the held side is SIGKILLed and started without a
 * hold. What each case does is written next to it in {@link #drive}.
 */
class HandshakeKillMatrixIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(90);
  private static final AtomicInteger SUBNETS = new AtomicInteger();

  /** A step of the handshake, in the order the handshake reaches them. */
  enum Step {
    OPERATOR_ASKED("operator-asked"),
    DAEMON_CLOSED("daemon-closed"),
    DAEMON_ANSWERED("daemon-answered"),
    OPERATOR_REREAD("operator-reread"),
    OPERATOR_DELETING("operator-deleting");

    final String hook;

    Step(String hook) {
      this.hook = hook;
    }
  }

  enum Side {
    OPERATOR,
    DAEMON
  }

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("kill");
  private final Map<String, Optional<BlockRelease>> deletedWith = new ConcurrentHashMap<>();
  private Watch watch;
  private OperatorProcess operator;
  private NodeRig rig;
  private String pool;
  private final Map<Integer, String> held = new HashMap<>();
  private int nextPod;

  @AfterEach
  void stopAll() throws Exception {
    Close.all(watch);
  }

  static Stream<Arguments> cases() {
    return Stream.of(Step.values())
        .flatMap(step -> Stream.of(Side.values()).map(side -> Arguments.of(step, side)));
  }

  @ParameterizedTest(name = "{0}, {1} SIGKILLed")
  @MethodSource("cases")
  void noBlockGoesWithoutReadyNoAddressIsHeldTwiceAndNoBlockStaysClosed(Step step, Side side)
      throws Exception {
    // Which side holds where from the start, so that neither runs past the step under test.
    Step operatorHold =
        switch (step) {
          case OPERATOR_ASKED, DAEMON_ANSWERED -> Step.OPERATOR_ASKED;
          case OPERATOR_REREAD, OPERATOR_DELETING -> step;
          case DAEMON_CLOSED -> null;
        };
    Step daemonHold = step == Step.DAEMON_CLOSED || step == Step.DAEMON_ANSWERED ? step : null;

    pool = Fixtures.uniqueName("kill");
    operator = processes.operator();
    if (operatorHold != null) {
      // Only this pool's blocks: blocks of other tests' pools reach the same steps.
      operator.holdAt(operatorHold.hook).withEnv(Checkpoint.HOLD_POOL, pool);
    }
    operator.startLeading(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3"), WITHIN);
    Cluster.poolReadiedByOperator(
        client, pool, Cluster.spec("10.209." + SUBNETS.getAndIncrement() + ".0/24", 29, 0));
    watchBlocks();
    Map<String, String> daemonEnv = new HashMap<>(Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1"));
    if (daemonHold != null) {
      daemonEnv.put(Checkpoint.HOLD_AT, daemonHold.hook);
      daemonEnv.put(Checkpoint.HOLD_FILE, processes.dir.resolve("daemon.held").toString());
      daemonEnv.put(Checkpoint.HOLD_POOL, pool);
    }
    rig = processes.node(pool, daemonEnv);

    IPBlock idle = emptySecondBlock();
    IPBlock busy = rig.blockOf(pool, held.get(0)).orElseThrow();

    drive(step, side, idle);

    await()
        .atMost(WITHIN)
        .alias("the idle block is gone or open again (operator " + operator.log + ")")
        .until(() -> goneOrOpen(idle));
    assertThat(block(busy.getMetadata().getName()).getMetadata().getUid())
        .as("the busy block stays")
        .isEqualTo(busy.getMetadata().getUid());
    CniCall.Outcome after = add();
    assertThat(after.ok()).as("the node allocates after the case: %s", after.stdout()).isTrue();
    assertDeletedOnlyWhenReady();
    assertEachAddressOnceAndInALiveBlockOfItsNode();
    await()
        .atMost(WITHIN)
        .alias("no block of the pool stays closed")
        .untilAsserted(
            () ->
                assertThat(rig.blocks(pool))
                    .allSatisfy(
                        b ->
                            assertThat(state(b))
                                .as("release of %s", b.getMetadata().getName())
                                .isNotIn(ReleaseState.Requested, ReleaseState.Ready)));
  }

  /**
   * Drives the handshake to {@code step}, SIGKILLs {@code side} there and starts it again, then
   * lets the handshake finish.
   */
  private void drive(Step step, Side side, IPBlock idle) throws Exception {
    DaemonProcess daemon = rig.daemon;
    switch (step) {
      case OPERATOR_ASKED -> {
        if (side == Side.OPERATOR) {
          // Requested written, the operator gone before it saw an answer; the daemon answers
          // Ready to nobody; the new operator acts on that answer of the old round.
          operator.awaitHeld(step.hook, WITHIN);
          operator.kill();
          awaitState(idle, ReleaseState.Ready);
          restartOperator();
        } else {
          // The daemon is down when the request arrives: the request waits, unanswered, for
          // the daemon started again, which answers it after its sync; then the held operator
          // is SIGKILLed and its successor finishes the round.
          awaitReportedEmpty(idle);
          daemon.kill();
          operator.awaitHeld(step.hook, WITHIN);
          assertThat(state(block(idle.getMetadata().getName()))).isEqualTo(ReleaseState.Requested);
          daemon.start();
          daemon.awaitReady(rig.kipam, pool);
          awaitState(idle, ReleaseState.Ready);
          probeClosed(idle);
          restartOperator();
        }
      }
      case DAEMON_CLOSED -> {
        daemon.awaitHeld(step.hook, WITHIN);
        assertThat(state(block(idle.getMetadata().getName()))).isEqualTo(ReleaseState.Requested);
        probeClosed(idle);
        if (side == Side.DAEMON) {
          // Closed in memory, Ready decided, nothing written: the daemon started again decides
          // anew from its sync.
          restartDaemon();
        } else {
          // The operator is replaced while the request is unanswered: the new one must wait for
          // an answer, not take the block; then the held daemon is SIGKILLed and restarted.
          replaceOperator();
          await()
              .during(Duration.ofSeconds(3))
              .atMost(Duration.ofSeconds(10))
              .until(() -> state(block(idle.getMetadata().getName())) == ReleaseState.Requested);
          restartDaemon();
        }
      }
      case DAEMON_ANSWERED -> {
        // The operator asked and is held there, so it cannot act on the answer yet.
        operator.awaitHeld(Step.OPERATOR_ASKED.hook, WITHIN);
        daemon.awaitHeld(step.hook, WITHIN);
        assertThat(state(block(idle.getMetadata().getName()))).isEqualTo(ReleaseState.Ready);
        if (side == Side.DAEMON) {
          // The daemon started again finds its own Ready answer: the block stays closed until
          // the operator, started again, deletes it.
          restartDaemonThenReplaceOperator(idle);
        } else {
          // The operator started again acts on the Ready answer while the daemon that wrote it
          // hangs; then the daemon is SIGKILLed and, started again, finds its block gone.
          replaceOperator();
          await().atMost(WITHIN).until(() -> gone(idle));
          restartDaemon();
        }
      }
      case OPERATOR_REREAD -> {
        operator.awaitHeld(step.hook, WITHIN);
        assertThat(state(block(idle.getMetadata().getName()))).isEqualTo(ReleaseState.Ready);
        if (side == Side.OPERATOR) {
          // Fresh read and LIST passed, the delete never sent: the new operator reads again.
          replaceOperator();
        } else {
          // The daemon restarts between the operator's checks and its delete: it finds its
          // Ready answer and keeps the block closed; then the held operator is replaced.
          restartDaemonThenReplaceOperator(idle);
        }
      }
      case OPERATOR_DELETING -> {
        operator.awaitHeld(step.hook, WITHIN);
        assertThat(block(idle.getMetadata().getName()).getMetadata().getDeletionTimestamp())
            .isNotNull();
        if (side == Side.OPERATOR) {
          // Deleted, the finalizer still on: the new operator lets the block go.
          replaceOperator();
        } else {
          // The daemon restarts while its block waits on the finalizer: being deleted, the
          // block stays closed for good; then the held operator is replaced.
          restartDaemonThenReplaceOperator(idle);
        }
      }
    }
  }

  /**
   * ADDs pods until the node holds a second block, then DELs the pods of that block: the first
   * block keeps pods in all three namespaces, the second is idle. Returns the idle block.
   */
  private IPBlock emptySecondBlock() {
    String first = null;
    while (true) {
      CniCall.Outcome outcome = add();
      assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
      String block = rig.blockOf(pool, outcome.ip()).orElseThrow().getMetadata().getName();
      if (first == null) {
        first = block;
      } else if (!first.equals(block)) {
        break;
      }
      assertThat(nextPod).as("pods before a second block").isLessThan(20);
    }
    assertThat(held.size())
        .as("pods in the first block, one per namespace at least")
        .isGreaterThan(3);
    int last = nextPod - 1;
    IPBlock idle = rig.blockOf(pool, held.get(last)).orElseThrow();
    assertThat(rig.del(pool, last).ok()).isTrue();
    held.remove(last);
    return idle;
  }

  private CniCall.Outcome add() {
    int i = nextPod++;
    CniCall.Outcome outcome = rig.add(pool, i);
    if (outcome.ok()) {
      held.put(i, outcome.ip());
    }
    return outcome;
  }

  /** While the block is still that object, an ADD gets an address outside it. */
  private void probeClosed(IPBlock idle) {
    CniCall.Outcome outcome = add();
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    IPBlock now = block(idle.getMetadata().getName());
    if (now != null && now.getMetadata().getUid().equals(idle.getMetadata().getUid())) {
      assertThat(Cidr.parse(idle.getSpec().getCidr()).contains(IpAddress.parse(outcome.ip())))
          .as("%s handed out from the closed block %s", outcome.ip(), idle.getSpec().getCidr())
          .isFalse();
    }
  }

  /** SIGKILLs the operator, held or not, and starts another. */
  private void replaceOperator() throws InterruptedException {
    operator.kill();
    restartOperator();
  }

  /**
   * The daemon started again keeps {@code idle} closed (its answer, or the block's deletion, says
   * so); then the held operator is replaced.
   */
  private void restartDaemonThenReplaceOperator(IPBlock idle) throws InterruptedException {
    restartDaemon();
    probeClosed(idle);
    replaceOperator();
  }

  private void restartOperator() throws InterruptedException {
    operator.holdNowhere().restart().awaitLeader(WITHIN);
  }

  private void restartDaemon() throws InterruptedException {
    rig.daemon.holdNowhere();
    rig.restart();
  }

  private void watchBlocks() {
    watch =
        client
            .resources(IPBlock.class)
            .withLabel(ApiConstants.LABEL_POOL, pool)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, IPBlock block) {
                    boolean deleting = block.getMetadata().getDeletionTimestamp() != null;
                    if (action == Action.DELETED || deleting) {
                      // The first time the block is seen deleted: the status it was deleted with.
                      deletedWith.putIfAbsent(
                          block.getMetadata().getUid(),
                          Optional.ofNullable(block.getStatus()).map(s -> s.getRelease()));
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                });
  }

  private void assertDeletedOnlyWhenReady() {
    assertThat(deletedWith)
        .allSatisfy(
            (uid, release) ->
                assertThat(release)
                    .as("release status of block %s when it was deleted", uid)
                    .hasValueSatisfying(
                        r -> {
                          assertThat(r.getState()).isEqualTo(ReleaseState.Ready);
                          assertThat(r.getRequestedAt()).isNotNull();
                          assertThat(r.getRespondedAt()).isNotNull();
                        }));
  }

  private void assertEachAddressOnceAndInALiveBlockOfItsNode() {
    List<IPAddress> addresses = Cluster.addresses(client, pool);
    assertThat(addresses.stream().map(a -> a.getSpec().getIp()))
        .as("addresses of pool %s over all namespaces", pool)
        .doesNotHaveDuplicates()
        .containsExactlyInAnyOrderElementsOf(held.values());
    assertThat(addresses.stream().map(a -> a.getMetadata().getNamespace()).distinct()).hasSize(3);
    for (IPAddress address : addresses) {
      IPBlock block = block(address.getSpec().getBlock());
      assertThat(block).as("block of %s", address.getSpec().getIp()).isNotNull();
      assertThat(block.getMetadata().getDeletionTimestamp()).isNull();
      assertThat(block.getSpec().getNode())
          .isEqualTo(rig.node)
          .isEqualTo(address.getSpec().getNode());
      assertThat(
              Cidr.parse(block.getSpec().getCidr())
                  .contains(IpAddress.parse(address.getSpec().getIp())))
          .isTrue();
    }
  }

  private boolean goneOrOpen(IPBlock idle) {
    IPBlock now = block(idle.getMetadata().getName());
    return gone(idle)
        || (now.getMetadata().getDeletionTimestamp() == null
            && state(now) != ReleaseState.Requested
            && state(now) != ReleaseState.Ready);
  }

  private boolean gone(IPBlock idle) {
    IPBlock now = block(idle.getMetadata().getName());
    return now == null || !now.getMetadata().getUid().equals(idle.getMetadata().getUid());
  }

  private void awaitState(IPBlock idle, ReleaseState state) {
    await()
        .atMost(WITHIN)
        .alias(
            "block "
                + idle.getMetadata().getName()
                + " "
                + state
                + " (node "
                + rig.daemon.log
                + ")")
        .until(() -> state(block(idle.getMetadata().getName())) == state);
  }

  private void awaitReportedEmpty(IPBlock idle) {
    await()
        .atMost(WITHIN)
        .until(
            () -> {
              IPBlock now = block(idle.getMetadata().getName());
              return now.getStatus() != null
                  && now.getStatus().getAllocated() != null
                  && now.getStatus().getAllocated() == 0;
            });
  }

  private IPBlock block(String name) {
    return client.resources(IPBlock.class).withName(name).get();
  }

  private static ReleaseState state(IPBlock block) {
    return block == null || block.getStatus() == null || block.getStatus().getRelease() == null
        ? null
        : block.getStatus().getRelease().getState();
  }
}
