package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.runtime.Checkpoint;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.RestartHeld;
import io.kipam.system.harness.RuntimeRetries;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A host-prefix pool sized exactly, over more nodes than addresses: a /28 in /32 blocks (14
 * assignable addresses) used by 20 nodes. Fourteen nodes take one address each; once all are
 * released, pods on the six nodes that never held one get every one of the 14 (retried on "try
 * again later", code 11, as a runtime retries, for up to 60 s: while the pool has free addresses a
 * node that cannot reach one yet says so, and "no address left", 100, would be false), none held
 * twice, each in a host-prefix block of its own node. Real kipam-operator and kipam-node processes;
 * pods in three namespaces.
 */
class ExactBudgetHostPrefixIT {

  @RegisterExtension static final SystemTest SYSTEM = SystemTest.againstControlPlane();

  private static final int NODES = 20;
  private static final int REUSE_DELAY_SECONDS = 3;
  private static final int KILLED_DONORS = 5;
  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Duration RUNTIME_RETRIES = Duration.ofSeconds(60);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("budget");

  @Test
  void podsOnNodesThatNeverHeldAnAddressGetEveryAddressOnceReleased() throws Exception {
    processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    String pool = Fixtures.uniqueName("budget");
    List<NodeRig> nodes = startNodes(pool, "10.203.0.0/28", n -> DAEMON);
    takeEachAndRelease(pool, nodes);
    serveNewcomers(pool, nodes);
  }

  /**
   * The same with the donors' daemons SIGKILLed as they give back their released address's block
   * (the address has rested, the block is not yet deleted) and kipam-operator SIGKILLed while the
   * addresses move: each started again (without a hold) while the newcomers' ADDs are retried.
   */
  @Test
  void everyAddressReachesNewcomersWhenDonorsAndOperatorAreKilledMidMove() throws Exception {
    OperatorProcess operator =
        processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    String pool = Fixtures.uniqueName("budget");
    List<NodeRig> nodes =
        startNodes(
            pool,
            "10.203.1.0/28",
            n -> {
              if (n >= KILLED_DONORS) {
                return DAEMON;
              }
              Map<String, String> env = new HashMap<>(DAEMON);
              env.put(Checkpoint.HOLD_AT, "daemon-giving-back");
              env.put(Checkpoint.HOLD_POOL, pool);
              env.put(Checkpoint.HOLD_FILE, processes.dir.resolve("held-" + n).toString());
              return env;
            });
    takeEachAndRelease(pool, nodes);
    operator.kill();
    RestartHeld restarts =
        new RestartHeld(
            operator, null, nodes.subList(0, KILLED_DONORS), "daemon-giving-back", WITHIN);
    try (restarts) {
      CompletableFuture<Void> operatorBack =
          CompletableFuture.runAsync(
              () -> {
                await().atMost(WITHIN).until(() -> !restarts.daemonsKilled().isEmpty());
                try {
                  operator.restart().awaitLeader(WITHIN);
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      serveNewcomers(pool, nodes);
      operatorBack.get();
    }
    System.out.printf(
        "killed mid-move: kipam-operator once, the daemons of %d donors%n",
        restarts.daemonsKilled().size());
    assertThat(restarts.daemonsKilled()).hasSize(KILLED_DONORS);
  }

  /** Creates the pool on {@code cidr} (a /28 in /32 blocks) and the nodes, daemons ready. */
  private List<NodeRig> startNodes(String pool, String cidr, IntFunction<Map<String, String>> env)
      throws Exception {
    Cluster.poolReadiedByOperator(client, pool, Cluster.spec(cidr, 32, REUSE_DELAY_SECONDS));
    return processes.nodes(pool, NODES, env);
  }

  /** Fourteen nodes take one address each, the fifteenth finds none; then all 14 are released. */
  private void takeEachAndRelease(String pool, List<NodeRig> nodes) {
    for (int n = 0; n < 14; n++) {
      CniCall.Outcome first = nodes.get(n).add(pool, 0);
      assertThat(first.ok()).as(first.stdout()).isTrue();
    }
    assertThat(
            CniCall.whileTryAgain(() -> nodes.get(14).add(pool, 0), Duration.ofSeconds(30))
                .stdout())
        .as("the 15th finds none")
        .contains("\"code\":100,");
    for (int n = 0; n < 14; n++) {
      assertThat(nodes.get(n).del(pool, 0).ok()).isTrue();
    }
  }

  /**
   * The six nodes that never held an address ADD 14 pods at once, each retried as a runtime
   * retries: every one gets an address, none held twice, each in a host-prefix block of its node.
   */
  private void serveNewcomers(String pool, List<NodeRig> nodes) throws Exception {
    List<NodeRig> newcomers = nodes.subList(14, NODES);
    ExecutorService callers = Executors.newFixedThreadPool(newcomers.size());
    List<Future<List<CniCall.Outcome>>> outcomes = new ArrayList<>();
    try {
      for (int k = 0; k < newcomers.size(); k++) {
        NodeRig node = newcomers.get(k);
        int pods = 14 / newcomers.size() + (k < 14 % newcomers.size() ? 1 : 0);
        outcomes.add(
            callers.submit(
                () -> {
                  List<CniCall.Outcome> mine = new ArrayList<>();
                  for (int i = 1; i <= pods; i++) {
                    mine.add(
                        node.addRetried(
                            List.of(pool), i, RUNTIME_RETRIES, RuntimeRetries.TRY_AGAIN_LATER));
                  }
                  return mine;
                }));
      }
      int ok = 0;
      for (Future<List<CniCall.Outcome>> f : outcomes) {
        for (CniCall.Outcome o : f.get()) {
          assertThat(o.ok()).as(o.stdout()).isTrue();
          ok++;
        }
      }
      System.out.printf(
          "exact host-prefix pool: %d of 14 addresses reached pods on %d nodes that never held"
              + " one; their answers by code on the way (0 a success, 100 none yet): %s%n",
          ok, newcomers.size(), RuntimeRetries.seenBy(newcomers));
    } finally {
      callers.shutdownNow();
    }

    List<IPAddress> held = Cluster.addresses(client, pool);
    assertThat(held).hasSize(14);
    Set<String> ips = new HashSet<>();
    for (IPAddress a : held) {
      assertThat(ips.add(a.getSpec().getIp())).as("%s held twice", a.getSpec().getIp()).isTrue();
      NodeRig holder =
          newcomers.stream()
              .filter(r -> r.node.equals(a.getSpec().getNode()))
              .findFirst()
              .orElseThrow();
      assertThat(holder.blockOf(pool, a.getSpec().getIp()))
          .as("a block of its own node")
          .isPresent();
    }
    assertThat(held.stream().map(a -> a.getMetadata().getNamespace()).distinct())
        .hasSizeGreaterThan(1);
  }
}
