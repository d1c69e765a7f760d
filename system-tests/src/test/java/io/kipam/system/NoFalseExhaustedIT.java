package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * No false "exhausted" (issue: a pool sized exactly serves every pod): a pool holds exactly as many
 * addresses as pods are started, so until the last pod is served it always has a free one, and no
 * ADD may answer code 100. An ADD that finds none it can reach — claims that met another node's, a
 * slot held by another node — answers code 11 (try again) and records demand; retried as a runtime
 * retries a sandbox, every pod is served, none twice. Real kube-apiserver, kipam-operator and
 * kipam-node processes; pods over three namespaces; 32 ADDs at once; which node each pod lands on
 * is drawn from a seed the test prints ({@code -Dkipam.seed=} repeats it).
 */
class NoFalseExhaustedIT {

  private static final Duration WITHIN = Duration.ofSeconds(120);
  private static final int AT_ONCE = 32;
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");
  private static final AtomicInteger SUBNETS = new AtomicInteger();
  private static final Pattern CODE = Pattern.compile("\"code\":(\\d+),");

  private final KubernetesClient client = ControlPlane.shared().client();
  private final long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("exact");

  /** The pools of the acceptance: a pool's addresses, its block size, and its pods per node. */
  enum Case {
    /** 100 addresses in /32 blocks (host-prefix mode), 100 pods on 4 nodes drawn by the seed. */
    HOST_PREFIX_100(100, 32, 4),
    /** 100 addresses in two /26 slots: two of the 4 nodes can only be served by a Shared slot. */
    SLOTS_26_100(100, 26, 4),
    /** 14 addresses of a /28 in /32 blocks, pods spread 7/3/2/1/1. */
    HOST_PREFIX_14(14, 32, 5);

    final int addresses;
    final int blockSize;
    final int nodes;

    Case(int addresses, int blockSize, int nodes) {
      this.addresses = addresses;
      this.blockSize = blockSize;
      this.nodes = nodes;
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Case.class)
  void anExactPoolNeverAnswersExhaustedAndServesEveryPod(Case c) throws Exception {
    String pool = pool(c);
    List<NodeRig> rigs = processes.nodes(pool, c.nodes, DAEMON);
    Random random = new Random(seed);
    List<Integer> nodeOf = placement(c, random);
    System.out.printf("%s (seed %d): pods per node %s%n", c, seed, perNode(nodeOf, c.nodes));

    Map<Integer, Integer> answers = new ConcurrentHashMap<>();
    List<String> falseExhausted = java.util.Collections.synchronizedList(new ArrayList<>());
    long start = System.nanoTime();
    long deadline = start + WITHIN.toNanos();
    ExecutorService runtimes = Executors.newFixedThreadPool(AT_ONCE);
    List<Future<Boolean>> pods = new ArrayList<>();
    try {
      for (int i = 0; i < nodeOf.size(); i++) {
        int pod = i;
        NodeRig rig = rigs.get(nodeOf.get(i));
        long jitter = random.nextInt(500);
        pods.add(
            runtimes.submit(
                () -> {
                  while (true) {
                    CniCall.Outcome outcome = rig.add(pool, pod);
                    int code = outcome.ok() ? 0 : code(outcome.stdout());
                    answers.merge(code, 1, Integer::sum);
                    if (code == 0) {
                      return true;
                    }
                    if (code == 100) {
                      falseExhausted.add(rig.node + " pod " + pod + ": " + outcome.stdout());
                    }
                    if (System.nanoTime() > deadline) {
                      return false;
                    }
                    // A runtime's back-off before it tries the sandbox again.
                    Thread.sleep(1000 + jitter);
                  }
                }));
      }
      int served = 0;
      for (Future<Boolean> f : pods) {
        served += f.get() ? 1 : 0;
      }
      System.out.printf(
          "%s: %d of %d pods served in %.1f s; answers by code (0 = served) %s%n",
          c, served, nodeOf.size(), (System.nanoTime() - start) / 1e9, new TreeMap<>(answers));
      assertThat(falseExhausted)
          .as("code 100 while the pool had free addresses (operator log %s)", SYSTEM.operatorLog())
          .isEmpty();
      assertThat(served).as("operator log %s", SYSTEM.operatorLog()).isEqualTo(c.addresses);
    } finally {
      runtimes.shutdownNow();
    }
    List<IPAddress> held = Cluster.addresses(client, pool);
    Set<String> ips = new HashSet<>();
    held.forEach(a -> ips.add(a.getSpec().getIp()));
    assertThat(held).hasSize(c.addresses);
    assertThat(ips).as("no address held twice, across namespaces").hasSize(c.addresses);
    assertThat(held.stream().map(a -> a.getMetadata().getNamespace()).distinct()).hasSize(3);
  }

  /** The pool: exactly {@code c.addresses} assignable addresses, from .10 on. */
  private String pool(Case c) {
    String pool = Fixtures.uniqueName("exact");
    String net = "10.209." + SUBNETS.incrementAndGet() + ".";
    IPPoolSpec spec = Cluster.spec(net + "0/25", c.blockSize, 0);
    spec.setRangeStart(net + "10");
    spec.setRangeEnd(net + (10 + c.addresses - 1));
    Cluster.poolReadiedByOperator(client, pool, spec);
    return pool;
  }

  /** The node of each pod: 7/3/2/1/1 for the small case, drawn from the seed otherwise. */
  private static List<Integer> placement(Case c, Random random) {
    List<Integer> nodeOf = new ArrayList<>();
    if (c == Case.HOST_PREFIX_14) {
      int[] spread = {7, 3, 2, 1, 1};
      for (int n = 0; n < spread.length; n++) {
        for (int k = 0; k < spread[n]; k++) {
          nodeOf.add(n);
        }
      }
      java.util.Collections.shuffle(nodeOf, random);
      return nodeOf;
    }
    for (int i = 0; i < c.addresses; i++) {
      nodeOf.add(random.nextInt(c.nodes));
    }
    return nodeOf;
  }

  private static List<Integer> perNode(List<Integer> nodeOf, int nodes) {
    List<Integer> counts = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      int node = n;
      counts.add((int) nodeOf.stream().filter(x -> x == node).count());
    }
    return counts;
  }

  private static int code(String stdout) {
    Matcher m = CODE.matcher(stdout);
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }
}
