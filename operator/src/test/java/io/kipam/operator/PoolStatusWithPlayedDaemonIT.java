package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * IPPool status as kipam-operator keeps it, against the real control plane: Ready once checked,
 * counts that follow the blocks' allocated counts (written here as the node daemons would),
 * Exhausted on and off, and overlap between pools of one network refused with an Event.
 *
 * <p>Why the daemon is played: this module tests the operator alone, and each test needs one exact
 * report or answer of a node daemon (a count, a {@code Ready} for a given round) at one exact
 * moment, which {@code reportAllocated} and {@code answer} write as the daemon writes them. With
 * real kipam-node processes, {@code PoolStatusAndPressureIT} in the node module shows the counts
 * and Exhausted.
 */
@WithControlPlane
class PoolStatusWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);

  @RegisterExtension
  static final OperatorPerClass cluster = OperatorPerClass.withSettings(Map.of()).andNodes("node");

  private final KubernetesClient client = cluster.client();
  private final Kipam kipam = new Kipam(client);
  private final String node = cluster.node();

  private static String network() {
    return Fixtures.uniqueName("net");
  }

  @Test
  void statusNodesCountsTheNodesTheSelectorMatchesAndFollowsTheirLabels() {
    String label = Fixtures.uniqueName("rack");
    String name = Fixtures.uniqueName("nodes");
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.44.0.0/24");
    spec.setBlockSize(28);
    spec.setNetwork(network());
    spec.setNodeSelector(
        new io.fabric8.kubernetes.api.model.LabelSelectorBuilder()
            .addToMatchLabels(label, "a")
            .build());
    IPPool pool = new IPPool();
    pool.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).build());
    pool.setSpec(spec);
    client.resource(pool).create();
    List<String> nodes =
        List.of(
            Fixtures.uniqueName("rack-a"),
            Fixtures.uniqueName("rack-a"),
            Fixtures.uniqueName("other"));
    for (String n : nodes) {
      Fixtures.registerNode(client, n);
    }
    for (String n : nodes.subList(0, 2)) {
      Fixtures.label(client.nodes().withName(n), label, "a");
    }

    await()
        .atMost(WITHIN)
        .untilAsserted(() -> assertThat(kipam.pool(name).getStatus().getNodes()).isEqualTo(2));

    Fixtures.label(client.nodes().withName(nodes.get(2)), label, "a");
    await()
        .atMost(WITHIN)
        .untilAsserted(() -> assertThat(kipam.pool(name).getStatus().getNodes()).isEqualTo(3));

    client.nodes().withName(nodes.get(0)).delete();
    await()
        .atMost(WITHIN)
        .untilAsserted(() -> assertThat(kipam.pool(name).getStatus().getNodes()).isEqualTo(2));
  }

  @Test
  void poolBecomesReadyWithCapacityAndAvailable() {
    String name = Fixtures.uniqueName("ready");
    IPPool created = kipam.createPool(name, "10.40.0.0/24", 28, network());

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              IPPool pool = kipam.pool(name);
              IPPoolStatus status = pool.getStatus();
              assertThat(status).isNotNull();
              assertThat(status.getObservedGeneration())
                  .isEqualTo(created.getMetadata().getGeneration());
              assertThat(kipam.conditionOf(name, "Ready")).isEqualTo("True/Checked");
              assertThat(status.getCapacity()).isEqualTo("254");
              assertThat(status.getAvailable()).isEqualTo("254");
              assertThat(status.getAllocated()).isZero();
              assertThat(status.getBlocks()).isZero();
              assertThat(kipam.conditionOf(name, "Exhausted"))
                  .isEqualTo("False/AddressesAvailable");
              assertThat(kipam.conditionOf(name, "Terminating")).isEqualTo("False/NotDeleted");
              assertThat(pool.getMetadata().getFinalizers())
                  .contains(ApiConstants.FINALIZER_POOL_PROTECTION);
            });
    Condition ready = kipam.condition(name, "Ready").orElseThrow();
    assertThat(ready.getObservedGeneration()).isEqualTo(created.getMetadata().getGeneration());
    assertThat(kipam.eventReasons(name)).contains("Ready");
  }

  @Test
  void readyFollowsTheCurrentGeneration() {
    String name = Fixtures.uniqueName("gen");
    kipam.createPool(name, "10.41.0.0/24", 28, network());
    await().atMost(WITHIN).until(() -> kipam.conditionOf(name, "Ready").equals("True/Checked"));

    IPPool edited =
        Fixtures.mergePatch(
            client.resources(IPPool.class).withName(name),
            Map.of("spec", Map.of("exclude", java.util.List.of("10.41.0.128/25"))));

    long generation = edited.getMetadata().getGeneration();
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              IPPoolStatus status = kipam.pool(name).getStatus();
              assertThat(status.getObservedGeneration()).isEqualTo(generation);
              assertThat(status.getCapacity()).isEqualTo("127");
              assertThat(kipam.requiredCondition(name, "Ready").getObservedGeneration())
                  .isEqualTo(generation);
            });
  }

  @Test
  void statusFollowsTheBlocksAllocatedCounts() throws Exception {
    String name = Fixtures.uniqueName("counts");
    IPPool pool = kipam.createPool(name, "10.42.0.0/24", 28, network());
    await().atMost(WITHIN).until(() -> kipam.conditionOf(name, "Ready").equals("True/Checked"));

    IPBlock first = kipam.claimBlock(pool, "10.42.0.0/28", node);
    IPBlock second = kipam.claimBlock(pool, "10.42.0.16/28", node);
    await().atMost(WITHIN).until(() -> kipam.pool(name).getStatus().getBlocks() == 2);
    assertThat(kipam.pool(name).getStatus().getAllocated())
        .as("blocks whose daemon has not reported count 0")
        .isZero();

    kipam.reportAllocated(first.getMetadata().getName(), 5);
    kipam.reportAllocated(second.getMetadata().getName(), 3);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              IPPoolStatus status = kipam.pool(name).getStatus();
              assertThat(status.getAllocated()).isEqualTo(8);
              assertThat(status.getAvailable()).isEqualTo("246");
              assertThat(status.getCapacity()).isEqualTo("254");
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(
                      cluster
                          .operator()
                          .metric("kipam_pool_allocated_addresses{pool=\"" + name + "\"}"))
                  .isEqualTo(8);
              assertThat(
                      cluster
                          .operator()
                          .metric("kipam_pool_available_addresses{pool=\"" + name + "\"}"))
                  .isEqualTo(246);
              assertThat(cluster.operator().metric("kipam_pool_blocks{pool=\"" + name + "\"}"))
                  .isEqualTo(2);
            });

    kipam.reportAllocated(first.getMetadata().getName(), 0);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> kipam.pool(name).getStatus().getAllocated() == 3);
  }

  @Test
  void exhaustedTurnsOnAndOffAsThePoolFillsAndDrains() {
    String name = Fixtures.uniqueName("full");
    IPPool pool = kipam.createPool(name, "10.43.0.0/30", 30, network());
    await().atMost(WITHIN).until(() -> kipam.conditionOf(name, "Ready").equals("True/Checked"));
    assertThat(kipam.pool(name).getStatus().getCapacity()).isEqualTo("2");
    IPBlock block = kipam.claimBlock(pool, "10.43.0.0/30", node);

    kipam.reportAllocated(block.getMetadata().getName(), 2);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(kipam.conditionOf(name, "Exhausted")).isEqualTo("True/NoAddressLeft");
              assertThat(kipam.pool(name).getStatus().getAvailable()).isEqualTo("0");
            });
    await().atMost(WITHIN).until(() -> kipam.eventReasons(name).contains("Exhausted"));

    kipam.reportAllocated(block.getMetadata().getName(), 1);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(kipam.conditionOf(name, "Exhausted"))
                  .isEqualTo("False/AddressesAvailable");
              assertThat(kipam.pool(name).getStatus().getAvailable()).isEqualTo("1");
            });
    await().atMost(WITHIN).until(() -> kipam.eventReasons(name).contains("AddressesAvailable"));
  }

  @Test
  void aPoolOverlappingAnOlderPoolOfItsNetworkIsRefusedWithAnEvent() {
    String network = network();
    // Names in creation order: pools created within the same second are ordered by name.
    String older = Fixtures.uniqueName("p1-older");
    String newer = Fixtures.uniqueName("p2-newer");
    kipam.createPool(older, "10.44.0.0/16", 24, network);
    await().atMost(WITHIN).until(() -> kipam.conditionOf(older, "Ready").equals("True/Checked"));

    kipam.createPool(newer, "10.44.8.0/24", 28, network);

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              Condition ready = kipam.requiredCondition(newer, "Ready");
              assertThat(ready.getStatus()).isEqualTo("False");
              assertThat(ready.getReason()).isEqualTo("Overlap");
              assertThat(ready.getMessage()).contains(older).contains("10.44.0.0/16");
            });
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(kipam.events(newer))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("Overlap");
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getMessage()).contains(older);
                          assertThat(e.getInvolvedObject().getKind()).isEqualTo("IPPool");
                        }));
    assertThat(kipam.conditionOf(older, "Ready"))
        .as("the older pool wins")
        .isEqualTo("True/Checked");
  }

  @Test
  void poolsOfDifferentNetworksMayOverlap() {
    String first = Fixtures.uniqueName("net-a");
    String second = Fixtures.uniqueName("net-b");
    kipam.createPool(first, "10.45.0.0/24", 28, network());
    kipam.createPool(second, "10.45.0.0/24", 28, network());

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              assertThat(kipam.conditionOf(first, "Ready")).isEqualTo("True/Checked");
              assertThat(kipam.conditionOf(second, "Ready")).isEqualTo("True/Checked");
            });
  }

  @Test
  void poolsWithoutANetworkShareOneAndTheNewerBecomesReadyWhenTheOlderGoes() {
    String older = Fixtures.uniqueName("p1-plain");
    String newer = Fixtures.uniqueName("p2-plain");
    // 100.66.0.0/16 is used by this test only: pools without a network all share one.
    kipam.createPool(older, "100.66.0.0/24", 28, null);
    await().atMost(WITHIN).until(() -> kipam.conditionOf(older, "Ready").equals("True/Checked"));
    kipam.createPool(newer, "100.66.0.0/25", 28, null);
    await().atMost(WITHIN).until(() -> kipam.conditionOf(newer, "Ready").equals("False/Overlap"));

    client.resources(IPPool.class).withName(older).delete();

    await().atMost(WITHIN).until(() -> kipam.pool(older) == null);
    await().atMost(WITHIN).until(() -> kipam.conditionOf(newer, "Ready").equals("True/Checked"));
    assertThat(kipam.eventReasons(newer)).contains("Overlap", "Ready");
  }

  @Test
  void theOperatorServesItsEndpoints() throws Exception {
    assertThat(cluster.operator().get("/healthz").statusCode()).isEqualTo(200);
    await().atMost(WITHIN).until(() -> cluster.operator().get("/readyz").statusCode() == 200);
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(
                        cluster
                            .operator()
                            .metric(
                                "kipam_operator_reconciles_total{controller=\"ippool\",operation=\"reconcile\",outcome=\"success\"}"))
                    .isPositive());
    assertThat(cluster.operator().metric("kipam_operator_leader")).isEqualTo(1);
  }
}
