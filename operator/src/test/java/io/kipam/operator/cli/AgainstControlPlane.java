package io.kipam.operator.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;

/**
 * What every test of {@code kubectl kipam} against the real control plane starts from: the shared
 * control plane, its client, the cluster objects kipam writes, the plugin as a user runs it, a
 * printed seed and three namespaces of its own. A subclass still carries the control-plane
 * annotation, with kipam's CRDs, itself.
 */
abstract class AgainstControlPlane {

  final ControlPlane controlPlane = ControlPlane.shared();
  final KubernetesClient client = controlPlane.client();
  final ClusterObjects objects = new ClusterObjects(client);
  final Plugin plugin = new Plugin(controlPlane);

  /** The test's seed, printed first so that a failing run can be repeated. */
  final long seed = printedSeed();

  final Random random = new Random(seed);

  /** Three new namespaces, one each of the teams a, b and c. */
  List<String> namespaces;

  @BeforeEach
  void makeTeamNamespaces() {
    namespaces = teamNamespaces();
  }

  /** A fresh random seed, printed so that a failing run can be repeated. */
  private static long printedSeed() {
    long seed = new Random().nextLong();
    System.out.println("seed " + seed);
    return seed;
  }

  /** A new Node named worker-..., registered with the control plane. */
  String registeredWorker() {
    String node = Fixtures.uniqueName("worker");
    Fixtures.registerNode(client, node);
    return node;
  }

  /** A new pool of {@code cidr} with blocks of /28, on a network of its own. */
  IPPool podsPool(String cidr) {
    return objects.pool(Fixtures.uniqueName("pods"), cidr, 28, Fixtures.uniqueName("net"));
  }

  private List<String> teamNamespaces() {
    List<String> namespaces = new ArrayList<>();
    for (String prefix : List.of("team-a", "team-b", "team-c")) {
      namespaces.add(Fixtures.namespace(client, prefix));
    }
    return namespaces;
  }
}
