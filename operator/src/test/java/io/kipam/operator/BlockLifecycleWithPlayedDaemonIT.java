package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.ProductDefaults;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator's side of a block's life where a block could leave with a live address or stay
 * closed for good, with this test in the node daemon's role (its writes as the daemon makes them):
 * a block deleted by hand or by its pool's garbage collection, a terminating pool's blocks, a
 * deleted Node's blocks, a Ready answer to a round an earlier leader asked for, a Ready answer that
 * is no consent, and a block whose daemon has not reported yet. The daemon's side of the same paths
 * is shown with real kipam-node processes in the node module.
 *
 * <p>Why the daemon is played: this module tests the operator alone, and each test needs one exact
 * report or answer of a node daemon (a count, a {@code Ready} for a given round) at one exact
 * moment, which {@code reportAllocated} and {@code answer} write as the daemon writes them. With
 * real kipam-node processes, {@code BlockLifecycleIT} in the node module runs these paths.
 */
@WithControlPlane(crds = true)
class BlockLifecycleWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static final AtomicInteger SUBNET = new AtomicInteger();

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = controlPlane.client();
  private final Kipam kipam = new Kipam(client);
  private final String node = Fixtures.uniqueName("node");
  private RunningOperator operator;

  BlockLifecycleWithPlayedDaemonIT() {
    Fixtures.registerNode(client, node);
  }

  @AfterEach
  void stopOperator() {
    if (operator != null) {
      operator.close();
    }
  }

  private void startOperator(Map<String, String> settings) throws Exception {
    operator = RunningOperator.start(controlPlane, settings);
  }

  /** How long a Node must have been gone before its blocks are taken: 8 s, and the default. */
  static Stream<Named<Map<String, String>>> nodeGoneGrace() {
    return ProductDefaults.timerFamily(
        "kipam-operator node-gone grace",
        "node-gone grace 8 s",
        Map.of("KIPAM_NODE_GONE_GRACE_SECONDS", "8"));
  }

  /** How long a refusal stays before the block is asked for again: 2 s, and the default. */
  static Stream<Named<Map<String, String>>> releaseRetry() {
    return ProductDefaults.timerFamily(
        "kipam-operator release retry",
        "release retry 2 s",
        Map.of("KIPAM_RELEASE_RETRY_SECONDS", "2"));
  }

  /**
   * An operator that asks for no idle block (an hour's delay), with a family's {@code timers}:
   * returns the {@code timer} it runs with.
   */
  private Duration startOperatorNeverIdle(
      Map<String, String> timers, Function<OperatorSettings, Duration> timer) throws Exception {
    Map<String, String> all = new HashMap<>(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"));
    all.putAll(timers);
    startOperator(all);
    return timer.apply(RunningOperator.settings(controlPlane, all));
  }

  /** A Ready pool of its own, 10.70.n.0/24 in blocks of /28. */
  private IPPool pool(String prefix) {
    String name = Fixtures.uniqueName(prefix);
    int n = SUBNET.incrementAndGet();
    return kipam.checkedPool(name, "10.70." + n + ".0/24", WITHIN);
  }

  private static String cidr(IPPool pool, int block) {
    String base = pool.getSpec().getCidr().replace(".0/24", "");
    return base + "." + (16 * block) + "/28";
  }

  /** The name of block {@code n} of {@code pool}, claimed for this test's node. */
  private String claimed(IPPool pool, int n) {
    return kipam.claimBlock(pool, cidr(pool, n), node).getMetadata().getName();
  }

  /** A {@link #claimed} block whose daemon reported no address allocated in it. */
  private String reportedEmpty(IPPool pool, int n) {
    String name = claimed(pool, n);
    kipam.reportAllocated(name, 0);
    return name;
  }

  private BlockRelease release(String block) {
    IPBlock current = kipam.block(block);
    return current == null || current.getStatus() == null ? null : current.getStatus().getRelease();
  }

  private ReleaseState state(String block) {
    BlockRelease release = release(block);
    return release == null ? null : release.getState();
  }

  /** The block stays for {@code seconds}, and another node cannot claim its slot meanwhile. */
  private void staysFor(int seconds, String block) {
    await()
        .during(Duration.ofSeconds(seconds))
        .atMost(Duration.ofSeconds(seconds + 10))
        .until(() -> kipam.block(block) != null);
  }

  private void awaitBothGone(String block, IPPool pool) {
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              assertThat(kipam.block(block)).isNull();
              assertThat(kipam.pool(pool.getMetadata().getName())).isNull();
            });
  }

  @Test
  void aSharedSlotIsNeverAskedForAndGoesOnlyWhenNoSubClaimOfItIsLeft() throws Exception {
    startOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "1", "KIPAM_NODE_GONE_GRACE_SECONDS", "1"));
    IPPool pool = pool("shared");
    IPBlock slot = kipam.claimSharedSlot(pool, cidr(pool, 0));
    String name = slot.getMetadata().getName();
    String base = cidr(pool, 0).replace(".0/28", "");
    IPBlock sub = kipam.subClaim(pool, slot, base + ".5", node);
    kipam.reportAllocated(sub.getMetadata().getName(), 1);

    // No node holds it, so neither the idle delay nor a missing Node makes it a release round.
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(15))
        .until(() -> kipam.block(name) != null && release(name) == null);

    client.resources(IPBlock.class).withName(name).delete();
    staysFor(4, name);
    assertThat(kipam.block(name).getMetadata().getDeletionTimestamp()).isNotNull();

    // The sub-claim's holder gives it back (played here: deleted, then its finalizer off).
    client.resources(IPBlock.class).withName(sub.getMetadata().getName()).delete();
    // A merge patch without resourceVersion: the operator writes the sub-claim's status meanwhile.
    client
        .resources(IPBlock.class)
        .withName(sub.getMetadata().getName())
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"metadata\":{\"finalizers\":null}}");

    await().atMost(WITHIN).until(() -> kipam.block(name) == null);
    assertThat(kipam.eventReasons(name)).contains("Released");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("releaseRetry")
  void aBlockDeletedByHandWithALiveAddressStaysUntilItsNodeGivesItBack(
      Map<String, String> releaseRetry) throws Exception {
    Duration retry = startOperatorNeverIdle(releaseRetry, OperatorSettings::releaseRetryDelay);
    IPPool pool = pool("by-hand");
    IPBlock block = kipam.claimBlock(pool, cidr(pool, 1), node);
    String name = block.getMetadata().getName();
    IPAddress address =
        kipam.allocate(Fixtures.namespace(client, "by-hand"), block, Kipam.addressIn(block, 3));
    kipam.reportAllocated(name, 1);

    client.resources(IPBlock.class).withName(name).delete();

    staysFor(4, name);
    assertThat(kipam.block(name).getMetadata().getDeletionTimestamp()).isNotNull();
    assertThat(state(name)).as("its holder is asked to close it").isEqualTo(ReleaseState.Requested);
    String otherNode = Fixtures.uniqueName("other");
    assertThatThrownBy(() -> kipam.claimBlock(pool, cidr(pool, 1), otherNode))
        .as("the slot of a block being deleted cannot be claimed by another node")
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));

    // The daemon refuses while the address lives; the block stays closed, since it is deleted,
    // and is asked for again after the back-off.
    kipam.answer(name, ReleaseState.Refused, "1 of its addresses are in use");
    staysFor(3, name);
    kipam.delete(address);
    kipam.reportAllocated(name, 0);
    kipam.answerWhenAsked(name, ReleaseState.Ready, WITHIN.plus(retry));

    await().atMost(WITHIN).until(() -> kipam.block(name) == null);
  }

  @Test
  void aPoolDeletedInTheForegroundKeepsItsBlocksUntilTheirNodesGiveThemBack() throws Exception {
    startOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"));
    IPPool pool = pool("foreground");
    IPBlock block = kipam.claimBlock(pool, cidr(pool, 2), node);
    String name = block.getMetadata().getName();
    IPAddress address =
        kipam.allocate(Fixtures.namespace(client, "foreground"), block, Kipam.addressIn(block, 2));
    kipam.reportAllocated(name, 1);

    awaitGarbageCollectorKnowsPools();
    client
        .resources(IPPool.class)
        .withName(pool.getMetadata().getName())
        .withPropagationPolicy(DeletionPropagation.FOREGROUND)
        .delete();

    // The garbage collector deletes the pool's blocks first; the finalizer keeps the live one.
    await()
        .atMost(WITHIN)
        .until(() -> kipam.block(name).getMetadata().getDeletionTimestamp() != null);
    staysFor(4, name);

    kipam.delete(address);
    kipam.reportAllocated(name, 0);
    kipam.answerWhenAsked(name, ReleaseState.Ready, WITHIN);

    awaitBothGone(name, pool);
  }

  /**
   * The garbage collector learns of resource types that appear after it started (the CRDs) only at
   * its next discovery, every 30 s; until then it cannot act on a pool's dependents. A ConfigMap
   * owned by a pool that does not exist is collected only once it can.
   */
  private void awaitGarbageCollectorKnowsPools() {
    String namespace = Fixtures.namespace(client, "gc-probe");
    client
        .configMaps()
        .inNamespace(namespace)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("owned-by-a-missing-pool")
                .addNewOwnerReference()
                .withApiVersion(ApiConstants.API_VERSION)
                .withKind(IPPool.KIND)
                .withName(Fixtures.uniqueName("missing"))
                .withUid(java.util.UUID.randomUUID().toString())
                .endOwnerReference()
                .endMetadata()
                .build())
        .create();
    await()
        .atMost(Duration.ofSeconds(90))
        .until(
            () ->
                client.configMaps().inNamespace(namespace).withName("owned-by-a-missing-pool").get()
                    == null);
  }

  @Test
  void aDeletedPoolsBlocksGoOnlyAfterTheirNodesAnswerReady() throws Exception {
    startOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"));
    IPPool pool = pool("pool-del");
    String name = reportedEmpty(pool, 3);

    client.resources(IPPool.class).withName(pool.getMetadata().getName()).delete();

    await().atMost(WITHIN).until(() -> state(name) == ReleaseState.Requested);
    staysFor(4, name);
    assertThat(kipam.pool(pool.getMetadata().getName())).isNotNull();
    assertThat(kipam.conditionOf(pool.getMetadata().getName(), "Terminating"))
        .isEqualTo("True/Deleting");

    kipam.answer(name, ReleaseState.Ready, "empty");

    awaitBothGone(name, pool);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("nodeGoneGrace")
  void aBlockOfADeletedNodeIsClosedAtOnceAndTakenBackOnlyAfterTheGracePeriod(
      Map<String, String> nodeGoneGrace) throws Exception {
    Duration grace = startOperatorNeverIdle(nodeGoneGrace, OperatorSettings::nodeGoneGrace);
    IPPool pool = pool("node-gone");
    String name = reportedEmpty(pool, 4);

    long deleted = System.nanoTime();
    client.nodes().withName(node).delete();

    // A daemon still running on that node is asked to close the block at once ...
    await().atMost(WITHIN).until(() -> state(name) == ReleaseState.Requested);
    // ... but nothing is taken from it before the grace period is over.
    staysFor((int) grace.toSeconds() / 2, name);

    await().atMost(WITHIN.plus(grace)).until(() -> kipam.block(name) == null);
    System.out.printf(
        "the block of the deleted Node taken back %.1f s after its deletion (grace %s)%n",
        (System.nanoTime() - deleted) / 1e9, grace);
    assertThat(kipam.eventReasons(name)).contains("NodeGone");
  }

  @Test
  void aReadyAnswerToARoundAnEarlierLeaderAskedForReleasesTheBlock() throws Exception {
    startOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "1"));
    IPPool pool = pool("leader");
    String name = reportedEmpty(pool, 5);
    await().atMost(WITHIN).until(() -> state(name) == ReleaseState.Requested);

    // The round in the status is not the one this operator asked for: an earlier leader's.
    kipam.editBlockStatus(name, s -> s.getRelease().setRequestedAt("2020-01-01T00:00:00Z"));
    kipam.answer(name, ReleaseState.Ready, "empty");

    await().atMost(WITHIN).until(() -> kipam.block(name) == null);
  }

  @Test
  void aReadyAnswerWithoutItsRoundIsWithdrawnSoTheBlockOpensAgain() throws Exception {
    startOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600", "KIPAM_RELEASE_RETRY_SECONDS", "2"));
    IPPool pool = pool("no-round");
    String name = claimed(pool, 6);
    kipam.reportAllocated(name, 3);

    kipam.editBlockStatus(
        name,
        s -> {
          BlockRelease release = new BlockRelease();
          release.setState(ReleaseState.Ready);
          release.setRespondedAt("2026-01-01T00:00:00Z");
          s.setRelease(release);
        });

    await().atMost(WITHIN).until(() -> release(name) == null);
    assertThat(kipam.block(name)).isNotNull();
  }

  @Test
  void aBlockWhoseDaemonHasNotReportedIsNotAskedForAsIdle() throws Exception {
    startOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "1"));
    IPPool pool = pool("unreported");
    String name = claimed(pool, 7);

    await()
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(15))
        .until(() -> release(name) == null);

    kipam.reportAllocated(name, 0);

    await().atMost(WITHIN).until(() -> state(name) == ReleaseState.Requested);
    assertThat(kipam.block(name).getMetadata().getFinalizers())
        .contains(ApiConstants.FINALIZER_BLOCK_PROTECTION);
  }
}
