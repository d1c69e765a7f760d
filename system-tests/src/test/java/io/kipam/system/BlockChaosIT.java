package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pods come and go in three namespaces on several nodes, with kipam-operator as its own process and
 * real kipam-node daemons, while things go wrong: blocks are deleted by hand, a pool is deleted and
 * created again under its name, a Node object is deleted and registered again; or the operator and
 * a daemon are SIGKILLed and started again while the operator releases idle blocks. At the end no
 * address is held twice, every IPAddress lies in a block of its own node that still exists, every
 * live attachment has exactly one IPAddress and no other is left, and once every pod is gone no
 * block is left closed without a round in progress.
 */
class BlockChaosIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final Duration WITHIN = Duration.ofSeconds(90);
  private static final int ROUNDS = 12;
  private static final int PODS = 8;

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = ControlPlane.shared().client();
  private static final Map<String, String> DAEMON =
      Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1", "KIPAM_RELEASE_ABANDON_SECONDS", "30");

  private final Random random = new Random(17);
  private KipamProcesses processes;
  private int adds;
  private int refusedAdds;
  private int dels;
  private int blocksDeleted;
  private int poolsRecreated;

  @BeforeEach
  void setUp() throws Exception {
    KipamCrds.install(client);
  }

  private void stopAll() throws Exception {
    Close.all(processes);
  }

  /** kipam-operator as its own process with {@code env}, once it leads. */
  private OperatorProcess operator(Map<String, String> env) throws Exception {
    return processes.leadingOperator(env, WITHIN);
  }

  /** {@code count} registered nodes, each with its kipam-node process, ready. */
  private List<NodeRig> nodes(int count, String pool) throws Exception {
    return processes.nodes(pool, count, DAEMON);
  }

  private void createPool(String name, String cidr) {
    Cluster.poolReadiedByOperator(client, name, Cluster.spec(cidr, 28, 0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#recheck")
  void blocksDeletedByHandPoolsRecreatedAndANodeReRegisteredLeaveNoDuplicateNoStrayNoClosedBlock(
      Map<String, String> recheck) throws Exception {
    String steady = Fixtures.uniqueName("steady");
    String cycled = Fixtures.uniqueName("cycled");
    processes = new KipamProcesses(controlPlane, client, "chaos");
    try {
      Map<String, String> env =
          new HashMap<>(
              Map.of(
                  "KIPAM_BLOCK_IDLE_SECONDS", "3600",
                  "KIPAM_RELEASE_RETRY_SECONDS", "2",
                  "KIPAM_NODE_GONE_GRACE_SECONDS", "20"));
      env.putAll(recheck);
      OperatorProcess operator = operator(env);
      createPool(steady, "10.244.0.0/25");
      createPool(cycled, "10.244.1.0/26");
      List<NodeRig> nodes = nodes(3, steady);
      // Which pods hold an attachment, per node: pod i of a node uses pool i % 2.
      List<TreeSet<Integer>> live = noneLive(nodes);

      for (int round = 0; round < ROUNDS; round++) {
        churnEach(nodes, live, steady, cycled);
        deleteABlockByHand(steady);
        if (round % 3 == 1) {
          recreate(cycled, nodes, live, steady);
        }
        if (round == 4) {
          NodeRig away = nodes.get(2);
          client.nodes().withName(away.node).delete();
          for (int i = 0; i < PODS; i++) {
            if (!live.get(2).contains(i)) {
              CniCall.Outcome refused = away.add(poolOf(i, steady, cycled), i);
              assertThat(refused.ok()).as("ADD on a node whose Node object is gone").isFalse();
              refusedAdds++;
            }
          }
          Fixtures.registerNode(client, away.node);
        }
      }

      int held = assertNoDuplicateAndNoStray(operator);
      System.out.printf(
          "block chaos: %d ADDs (%d refused), %d DELs, %d blocks deleted by hand, pool recreated"
              + " %d times, one Node deleted and registered again; at the end %d IPAddresses,"
              + " none held twice, none outside a block of its node%n",
          adds + refusedAdds, refusedAdds, dels, blocksDeleted, poolsRecreated, held);

      for (int n = 0; n < nodes.size(); n++) {
        for (int i : List.copyOf(live.get(n))) {
          del(nodes.get(n), live.get(n), i, steady, cycled);
        }
      }
      await()
          .atMost(WITHIN)
          .alias("no block left closed without a round in progress; operator log " + operator.log)
          .untilAsserted(() -> assertThat(closedBlocks(List.of(steady, cycled))).isEmpty());
    } finally {
      stopAll();
    }
  }

  @Test
  void churnWithTheOperatorAndADaemonSigkilledLeavesNoDuplicateNoLeakNoStray() throws Exception {
    String pool = Fixtures.uniqueName("killed");
    processes = new KipamProcesses(controlPlane, client, "killed");
    try {
      // Idle blocks are asked for after 2 s, so releases run all through the churn.
      OperatorProcess operator =
          operator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "2", "KIPAM_RELEASE_RETRY_SECONDS", "2"));
      createPool(pool, "10.243.0.0/25");
      List<String> namespaces = processes.namespaces;
      List<NodeRig> nodes = nodes(4, pool);
      List<TreeSet<Integer>> live = noneLive(nodes);

      for (int round = 0; round < ROUNDS; round++) {
        churnEach(nodes, live, pool, pool);
        if (round == 3 || round == 8) {
          operator.kill();
          operator.restart();
        }
        if (round == 5 || round == 10) {
          nodes.get(1).restart(); // SIGKILL, start again, wait until ready
        }
      }
      operator.awaitLeader(WITHIN);

      int held = assertNoDuplicateAndNoStray(operator);
      assertNoLeak(nodes, live, namespaces);
      System.out.printf(
          "kill churn: %d ADDs (%d refused), %d DELs on 4 nodes, operator SIGKILLed twice, one"
              + " daemon SIGKILLed twice; at the end %d IPAddresses, one per live attachment,"
              + " none held twice, none outside a block of its node%n",
          adds + refusedAdds, refusedAdds, dels, held);
    } finally {
      stopAll();
    }
  }

  /** Exactly one IPAddress per live attachment, and none for an attachment deleted. */
  private void assertNoLeak(
      List<NodeRig> nodes, List<TreeSet<Integer>> live, List<String> namespaces) {
    List<String> expected = new ArrayList<>();
    for (int n = 0; n < nodes.size(); n++) {
      for (int i : live.get(n)) {
        expected.add(namespaces.get(i % 3) + "/" + nodes.get(n).node + "-pod-" + i);
      }
    }
    List<String> actual =
        client.resources(IPAddress.class).inAnyNamespace().list().getItems().stream()
            .filter(a -> namespaces.contains(a.getMetadata().getNamespace()))
            .map(a -> a.getMetadata().getNamespace() + "/" + a.getSpec().getPod().getName())
            .toList();
    assertThat(actual)
        .as("IPAddresses of live attachments")
        .containsExactlyInAnyOrderElementsOf(expected);
  }

  private static String poolOf(int pod, String steady, String cycled) {
    return pod % 2 == 0 ? steady : cycled;
  }

  /** Which pods hold an attachment, per node: none yet. */
  private static List<TreeSet<Integer>> noneLive(List<NodeRig> nodes) {
    List<TreeSet<Integer>> live = new ArrayList<>();
    nodes.forEach(n -> live.add(new TreeSet<>()));
    return live;
  }

  /** One round of {@link #churn} on every node, node by node. */
  private void churnEach(
      List<NodeRig> nodes, List<TreeSet<Integer>> live, String steady, String cycled) {
    for (int n = 0; n < nodes.size(); n++) {
      churn(nodes.get(n), live.get(n), steady, cycled);
    }
  }

  /** ADDs for some free pods, DELs for some live ones; failures of ADD are allowed. */
  private void churn(NodeRig node, TreeSet<Integer> live, String steady, String cycled) {
    for (int k = 0; k < 6; k++) {
      int i = random.nextInt(PODS);
      if (live.contains(i)) {
        del(node, live, i, steady, cycled);
      } else if (node.add(poolOf(i, steady, cycled), i).ok()) {
        live.add(i);
        adds++;
      } else {
        refusedAdds++;
      }
    }
  }

  private void del(NodeRig node, TreeSet<Integer> live, int i, String steady, String cycled) {
    await().atMost(WITHIN).until(() -> node.del(poolOf(i, steady, cycled), i).ok());
    live.remove(i);
    dels++;
  }

  private void deleteABlockByHand(String pool) {
    List<IPBlock> blocks =
        client
            .resources(IPBlock.class)
            .withLabel(ApiConstants.LABEL_POOL, pool)
            .list()
            .getItems()
            .stream()
            .filter(b -> b.getMetadata().getDeletionTimestamp() == null)
            .toList();
    if (!blocks.isEmpty()) {
      client.resource(blocks.get(random.nextInt(blocks.size()))).delete();
      blocksDeleted++;
    }
  }

  /** Releases every attachment of {@code pool}, deletes it, waits until it is gone, creates it. */
  private void recreate(
      String pool, List<NodeRig> nodes, List<TreeSet<Integer>> live, String steady) {
    for (int n = 0; n < nodes.size(); n++) {
      for (int i : List.copyOf(live.get(n))) {
        if (poolOf(i, steady, pool).equals(pool)) {
          del(nodes.get(n), live.get(n), i, steady, pool);
        }
      }
    }
    client.resources(IPPool.class).withName(pool).delete();
    await().atMost(WITHIN).until(() -> client.resources(IPPool.class).withName(pool).get() == null);
    createPool(pool, "10.244.1.0/26");
    poolsRecreated++;
  }

  /** Returns how many IPAddresses exist. */
  private int assertNoDuplicateAndNoStray(OperatorProcess operator) {
    List<IPAddress> addresses =
        client.resources(IPAddress.class).inAnyNamespace().list().getItems();
    Map<String, List<String>> holders = new TreeMap<>();
    for (IPAddress a : addresses) {
      holders
          .computeIfAbsent(
              a.getSpec().getPool() + "/" + a.getSpec().getIp(), k -> new ArrayList<>())
          .add(a.getMetadata().getNamespace() + "/" + a.getMetadata().getName());
    }
    assertThat(holders.entrySet().stream().filter(e -> e.getValue().size() > 1).toList())
        .as("addresses held twice")
        .isEmpty();
    Map<String, List<IPBlock>> blocks = new HashMap<>();
    client.resources(IPBlock.class).list().getItems().stream()
        .forEach(b -> blocks.computeIfAbsent(b.getSpec().getPool(), p -> new ArrayList<>()).add(b));
    List<String> stray =
        addresses.stream()
            .filter(
                a ->
                    blocks.getOrDefault(a.getSpec().getPool(), List.of()).stream()
                        .noneMatch(
                            b ->
                                // A slot claimed Shared from birth has no node; its
                                // addresses lie in sub-claims, which have one.
                                a.getSpec().getNode().equals(b.getSpec().getNode())
                                    && Cidr.parse(b.getSpec().getCidr())
                                        .contains(IpAddress.parse(a.getSpec().getIp()))))
            .map(a -> a.getMetadata().getNamespace() + "/" + a.getMetadata().getName())
            .collect(Collectors.toList());
    assertThat(stray)
        .as("IPAddresses outside a block of their node (operator log %s)", operator.log)
        .isEmpty();
    return addresses.size();
  }

  /**
   * Blocks of {@code pools} closed to allocation: being deleted, or Requested or Ready. (Blocks of
   * other tests' pools, whose daemons have stopped, stay Requested once an operator asks.) With
   * every pod gone, each round in progress ends within seconds (Ready and released, or cleared), so
   * any block still closed then is closed with no round that will end.
   */
  private List<String> closedBlocks(List<String> pools) {
    return client.resources(IPBlock.class).list().getItems().stream()
        .filter(b -> pools.contains(b.getSpec().getPool()))
        .filter(
            b -> {
              var release = b.getStatus() == null ? null : b.getStatus().getRelease();
              return b.getMetadata().getDeletionTimestamp() != null
                  || (release != null && release.getState() != ReleaseState.Refused);
            })
        .map(
            b ->
                b.getMetadata().getName()
                    + (b.getStatus() == null || b.getStatus().getRelease() == null
                        ? ""
                        : " " + b.getStatus().getRelease().getState()))
        .toList();
  }
}
