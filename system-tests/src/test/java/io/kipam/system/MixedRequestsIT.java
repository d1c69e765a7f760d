package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.system.harness.ChurnAndSample;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 2,000 ADD/DEL pairs mixing plain pods, pods with a chosen address ({@code kipam.io/ips}) and pods
 * choosing their pool ({@code kipam.io/pools}), over three namespaces and three nodes, with one
 * kipam-node SIGKILLed and started again midway: every IPAddress of the pools is sampled for an
 * address held twice throughout, and none is left at the end. Seeded ({@code -Dkipam.seed=N}):
 * which node, namespace and kind each pod gets, and when the kill lands.
 */
class MixedRequestsIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final int PAIRS = 2000;
  private static final int CALLERS = 6;
  private static final Duration RETRIES = Duration.ofSeconds(60);

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("mixed");
  private List<NodeRig> rigs;
  private final SeededRandom random = new SeededRandom();
  private ChurnAndSample plain;
  private ChurnAndSample chosen;

  @AfterEach
  void stopAll() throws Exception {
    ChurnAndSample.check("MixedRequestsIT", plain, chosen);
  }

  @Test
  void twoThousandMixedPairsWithADaemonKillHoldNoAddressTwiceAndLeaveNothing() throws Exception {
    random.print("MixedRequestsIT");
    String pool = Cluster.readiedPool(client, "mixed", Cluster.spec("10.214.0.0/24", 28, 0));
    String other = Cluster.readiedPool(client, "mixed-b", Cluster.spec("10.214.1.0/24", 28, 0));
    List<String> namespaces = processes.namespaces;
    rigs = processes.nodes(pool, 3, Map.of());
    plain = ChurnAndSample.start(client, pool, List.of());
    chosen = ChurnAndSample.start(client, other, List.of());

    int killAt = PAIRS / 4 + random.nextInt(PAIRS / 2);
    NodeRig victim = rigs.get(random.nextInt(rigs.size()));
    System.out.println("kipam-node of " + victim.node + " SIGKILLed after pair " + killAt);
    AtomicInteger next = new AtomicInteger();
    Map<String, Integer> kinds = new ConcurrentHashMap<>();
    ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
    List<Future<?>> done = new ArrayList<>();
    for (int c = 0; c < CALLERS; c++) {
      // One caller per chosen-address slot: two callers never ask for one address at once.
      int caller = c;
      long callerSeed = random.seed() + c;
      done.add(
          callers.submit(
              () -> {
                Random mine = new Random(callerSeed);
                for (int i = next.getAndIncrement(); i < PAIRS; i = next.getAndIncrement()) {
                  if (i == killAt) {
                    victim.restart();
                  }
                  NodeRig rig = rigs.get(mine.nextInt(rigs.size()));
                  String ns = namespaces.get(mine.nextInt(namespaces.size()));
                  String kind = List.of("plain", "static", "pool").get(mine.nextInt(3));
                  Map<String, String> annotations =
                      switch (kind) {
                        case "static" ->
                            Map.of(ApiConstants.ANNOTATION_IPS, "10.214.0." + (200 + caller));
                        case "pool" -> Map.of(ApiConstants.ANNOTATION_POOLS, other);
                        default -> Map.of();
                      };
                  kinds.merge(kind, 1, Integer::sum);
                  pair(rig, ns, "mixed-" + i, annotations, pool);
                }
                return null;
              }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    callers.shutdown();
    System.out.println("pairs by kind: " + kinds);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        client
                            .resources(IPAddress.class)
                            .inAnyNamespace()
                            .list()
                            .getItems()
                            .stream()
                            .filter(
                                a ->
                                    a.getSpec().getPool().equals(pool)
                                        || a.getSpec().getPool().equals(other))
                            .toList())
                    .as("IPAddresses left after every DEL")
                    .isEmpty());
  }

  /** One pod: ADD (retried while "try again", as a runtime does), DEL, the pod deleted. */
  private void pair(
      NodeRig rig, String namespace, String name, Map<String, String> annotations, String pool) {
    Pod pod = Cluster.annotatedPod(client, namespace, name, rig.node, annotations);
    String config = Cluster.config("1.1.0", rig.daemon.socket.toString(), pool);
    // A plain pod may hold a chosen address for a moment (kipam picks it like any free one):
    // the chosen one waits for it, as a runtime's retries would.
    long deadline = System.nanoTime() + RETRIES.toNanos();
    CniCall.Outcome added;
    do {
      added =
          CniCall.whileTryAgain(
              () ->
                  CniCall.run(
                      rig.kipam,
                      CniCall.env("ADD", "c-" + pod.getMetadata().getUid(), pod),
                      config),
              RETRIES);
    } while (added.stdout().contains("\"code\":104,") && System.nanoTime() < deadline);
    assertThat(added.ok()).as(added.stdout()).isTrue();
    CniCall.Outcome deleted =
        CniCall.whileTryAgain(
            () ->
                CniCall.run(
                    rig.kipam, CniCall.env("DEL", "c-" + pod.getMetadata().getUid(), pod), config),
            RETRIES);
    assertThat(deleted.ok()).as(deleted.stdout()).isTrue();
    client.resource(pod).withGracePeriod(0).delete();
  }
}
