package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.audit.Audit;
import io.kipam.operator.audit.DuplicateSummary;
import io.kipam.operator.audit.Sightings;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.runtime.client.PreconditionedDelete;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.RequestLog;
import io.kipam.testing.WithControlPlane;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Nodes that vanish with their pods (a cloud node gone, no CNI DEL ever made): the audit gives
 * their addresses back with reads per Node, never per address (issue: 5,000 nodes that come and
 * go). The Node's absence comes from the audit's one list of Node names and one GET per Node before
 * the writes, the pods' from one list of the Pods bound to each such Node; each address then costs
 * its writes alone: a delete with its UID as precondition (none for one the garbage collector
 * deleted already) and the removal of {@code kipam.io/attachment}. Addresses of live Nodes are
 * their daemons' and untouched. Addresses spread over three namespaces; which Node vanished, how
 * many addresses each held and which were deleted already are drawn from a printed seed.
 */
@WithControlPlane
class GoneNodeAuditIT {

  private final KubernetesClient admin;
  private final Kipam kipam;

  GoneNodeAuditIT(KubernetesClient client) {
    this.admin = client;
    this.kipam = new Kipam(client);
  }

  @BeforeAll
  static void crds(KubernetesClient client) {
    io.kipam.testing.KipamCrds.install(client);
  }

  @Test
  void addressesOfVanishedNodesGoBackWithReadsPerNodeNotPerAddress() {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    Random random = new Random(seed);
    List<String> namespaces = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      namespaces.add(Fixtures.namespace(admin, "gone-node" + i));
    }
    Kipam.PoolWithBlock claimed =
        kipam.poolWithBlock("gone-node", "10.62.0.0/22", "10.62.0.0/26", "unused");
    String pool = claimed.poolName();
    String block = claimed.blockName();

    List<String> nodes = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      nodes.add(Fixtures.uniqueName("churn-node"));
      Fixtures.registerNode(admin, nodes.get(i));
    }
    // Half the nodes vanish; which ones is drawn.
    List<String> vanishing = new ArrayList<>(nodes);
    java.util.Collections.shuffle(vanishing, random);
    vanishing = vanishing.subList(0, 3);

    List<IPAddress> ofGone = new ArrayList<>();
    List<IPAddress> ofLive = new ArrayList<>();
    int host = 1;
    int deletedAlready = 0;
    for (String node : nodes) {
      boolean vanishes = vanishing.contains(node);
      int count = 3 + random.nextInt(6);
      for (int i = 0; i < count; i++) {
        String namespace = namespaces.get(random.nextInt(namespaces.size()));
        // A vanished node's pods are gone with it: the addresses name pods that no longer exist.
        PodReference pod =
            vanishes
                ? new PodReference("p" + host, UUID.randomUUID().toString())
                : kipam.podOn(namespace, "p" + host, node);
        IPAddress address =
            kipam.allocateTo(namespace, pool, block, node, "10.62.0." + host++, pod, !vanishes);
        if (vanishes) {
          if (random.nextBoolean()) {
            // Deleted already, as the garbage collector does once the pod is gone; the finalizer
            // keeps it for the daemon, which is gone too.
            admin.resource(address).delete();
            deletedAlready++;
          }
          ofGone.add(address);
        } else {
          ofLive.add(address);
        }
      }
    }
    for (String node : vanishing) {
      admin.nodes().withName(node).delete();
    }
    System.out.printf(
        "seed %d: %d addresses of %d vanished Nodes (%d deleted already), %d of live Nodes, over"
            + " %s%n",
        seed, ofGone.size(), vanishing.size(), deletedAlready, ofLive.size(), namespaces);

    RequestLog log = new RequestLog();
    try (KubernetesClient client = log.client(ControlPlane.shared().adminConfig())) {
      Audit audit =
          new Audit(
              client,
              new PreconditionedDelete(client),
              new EventRecorder(client, "default", "gone-node-audit", Clock.systemUTC()),
              new OperatorMetrics(),
              Clock.systemUTC(),
              new Sightings(Duration.ZERO),
              new DuplicateSummary(),
              500);
      audit.run(); // the first sighting of each orphan
      Map<String, Integer> firstPass = RequestLog.counts(log.take());
      audit.run(); // seen again past the grace (zero here): removed
      Map<String, Integer> secondPass = RequestLog.counts(log.take());
      System.out.printf("requests of the first pass: %s%n", firstPass);
      System.out.printf("requests of the pass that removed them: %s%n", secondPass);

      for (IPAddress address : ofGone) {
        assertThat(kipam.current(address))
            .as("%s of a vanished Node is back in the pool", address.getSpec().getIp())
            .isNull();
      }
      for (IPAddress address : ofLive) {
        IPAddress now = kipam.current(address);
        assertThat(now).as("%s of a live Node stays", address.getSpec().getIp()).isNotNull();
        assertThat(now.getMetadata().getDeletionTimestamp()).isNull();
      }
      for (Map<String, Integer> pass : List.of(firstPass, secondPass)) {
        assertThat(pass.getOrDefault("GET pods", 0)).as("no Pod read per address").isZero();
        assertThat(pass.getOrDefault("LIST pods", 0))
            .as("one list of the Pods of each vanished Node, per use")
            .isLessThanOrEqualTo(2 * vanishing.size());
      }
      assertThat(secondPass.getOrDefault("GET ipaddresses", 0))
          .as("no IPAddress of a vanished Node read again before its writes")
          .isZero();
      assertThat(secondPass.getOrDefault("GET nodes", 0))
          .as("each Node read once before the writes")
          .isLessThanOrEqualTo(nodes.size());
      assertThat(secondPass.getOrDefault("DELETE ipaddresses", 0))
          .as("a delete for each address not deleted already")
          .isEqualTo(ofGone.size() - deletedAlready);
      assertThat(secondPass.getOrDefault("PATCH ipaddresses", 0))
          .as("one finalizer removal each")
          .isEqualTo(ofGone.size());
    }
  }
}
