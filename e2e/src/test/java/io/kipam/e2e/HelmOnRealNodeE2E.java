package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.Helm;
import io.kipam.testing.RealNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * kipam installed, upgraded and uninstalled with Helm on a {@link RealNode} (kubelet and
 * containerd): {@code helm install} of charts/kipam runs kipam and pods get addresses; {@code helm
 * upgrade} with a changed value rolls kipam-node without any pod's address changing hands; {@code
 * helm uninstall} leaves no kipam object but the CRDs. The values change only what the kustomize
 * overlay of {@link KipamOnRealNode} changes (the API server's address, the host paths). How many
 * pods in which namespace comes from a printed seed ({@code -Dkipam.seed=N}).
 */
class HelmOnRealNodeE2E {

  private static final String POOL = "helm-pods";
  private static final List<String> NAMESPACES = List.of("helm-a", "helm-b", "helm-c");
  private static final Duration PODS_TIMEOUT = Duration.ofMinutes(4);

  @Test
  void helmInstallsUpgradesWithoutLosingAnAddressAndUninstallsAllButTheCrds() throws IOException {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    Random random = new Random(seed);
    System.out.println("HelmOnRealNodeE2E seed " + seed);
    try (RealNode node = RealNode.start()) {
      KipamOnRealNode kipam = KipamOnRealNode.prepare(node, POOL, List.of(POOL));
      try {
        run(node, kipam, random);
      } finally {
        kipam.close();
      }
    }
  }

  private void run(RealNode node, KipamOnRealNode kipam, Random random) throws IOException {
    KubernetesClient client = node.client();
    Path kubeconfig = node.controlPlane().adminKubeconfig();
    Path values = Files.createTempFile("kipam-values", ".yaml");
    Files.writeString(
        values,
        kipam.helmValues()
            + """
            pools:
              - name: %s
                spec: {cidr: 10.251.0.0/26, blockSize: 28, gateway: 10.251.0.1, reuseDelaySeconds: 0}
            """
                .formatted(POOL));

    long installing = System.nanoTime();
    String installed =
        Helm.run(kubeconfig, "install", "kipam", Helm.chart().toString(), "-f", values.toString());
    kipam.awaitReady();
    System.out.printf(
        "helm install kipam charts/kipam: kipam Ready %.1f s later%n%s%n",
        seconds(installing), firstLines(installed, 3));

    for (String ns : NAMESPACES) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    List<String> order = new ArrayList<>(NAMESPACES);
    Collections.shuffle(order, random);
    Map<String, Integer> replicas = new TreeMap<>();
    for (String ns : order) {
      replicas.put(ns, 2 + random.nextInt(4));
      client
          .apps()
          .deployments()
          .inNamespace(ns)
          .resource(RealNodeKipamE2E.workload(ns, "web", replicas.get(ns)))
          .create();
    }
    int total = replicas.values().stream().mapToInt(Integer::intValue).sum();
    awaitRunning(client, total);
    Map<String, String> before = podAddresses(client);
    System.out.println("pods per namespace " + replicas + ": " + before.size() + " addresses");

    String daemonUid = kipam.nodeDaemonPod().getMetadata().getUid();
    long upgrading = System.nanoTime();
    Helm.run(
        kubeconfig,
        "upgrade",
        "kipam",
        Helm.chart().toString(),
        "-f",
        values.toString(),
        "--set",
        "node.env.KIPAM_BLOCK_STATUS_SECONDS=3");
    await()
        .atMost(Duration.ofMinutes(3))
        .until(() -> !daemonUid.equals(kipam.nodeDaemonPod().getMetadata().getUid()));
    kipam.awaitReady();
    System.out.printf(
        "helm upgrade --set node.env.KIPAM_BLOCK_STATUS_SECONDS=3: kipam-node rolled (pod %s"
            + " replaced) and Ready %.1f s later%n",
        daemonUid, seconds(upgrading));
    assertThat(podAddresses(client)).as("every pod's address after the upgrade").isEqualTo(before);
    for (String ns : NAMESPACES) {
      client.apps().deployments().inNamespace(ns).withName("web").scale(replicas.get(ns) + 2);
    }
    awaitRunning(client, total + 2 * NAMESPACES.size());
    Map<String, String> after = podAddresses(client);
    assertThat(after).containsAllEntriesOf(before);
    assertThat(after.values().stream().distinct()).hasSize(after.size());
    System.out.println(
        "after the upgrade: "
            + before.size()
            + " pods kept their addresses, "
            + (after.size() - before.size())
            + " new pods got theirs, no address held twice");

    // Uninstalling: the workloads and the pool first, while kipam still runs (docs/install.md).
    for (String ns : NAMESPACES) {
      client.namespaces().withName(ns).delete();
    }
    await()
        .atMost(PODS_TIMEOUT)
        .until(
            () -> client.resources(IPAddress.class).inAnyNamespace().list().getItems().isEmpty());
    client.resources(IPPool.class).withName(POOL).delete();
    await()
        .atMost(Duration.ofMinutes(2))
        .until(
            () ->
                client.resources(IPPool.class).list().getItems().isEmpty()
                    && client.resources(IPBlock.class).list().getItems().isEmpty());
    String uninstalled = Helm.run(kubeconfig, "uninstall", "kipam", "--wait");
    System.out.println(uninstalled.strip());
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              String left =
                  node.controlPlane()
                      .kubectl(
                          "get",
                          "namespaces,deployments,daemonsets,serviceaccounts,roles,rolebindings,"
                              + "clusterroles,clusterrolebindings,validatingadmissionpolicies,"
                              + "validatingadmissionpolicybindings,ippools.kipam.io,"
                              + "ipblocks.kipam.io,ipaddresses.kipam.io",
                          "-A",
                          "-o",
                          "name");
              assertThat(left.lines().filter(l -> l.contains("kipam")).toList())
                  .as("kipam objects left after helm uninstall")
                  .isEmpty();
            });
    String crds = node.controlPlane().kubectl("get", "crds", "-o", "name");
    assertThat(crds).contains("ipaddresses.kipam.io", "ipblocks.kipam.io", "ippools.kipam.io");
    System.out.println(
        "helm uninstall kipam: no kipam object left but the CRDs "
            + crds.lines().filter(l -> l.contains("kipam.io")).collect(Collectors.toList()));
  }

  /** Each running pod of the test's namespaces, by namespace/name, with its address. */
  private static Map<String, String> podAddresses(KubernetesClient client) {
    Map<String, String> addresses = new TreeMap<>();
    for (Pod pod : pods(client)) {
      addresses.put(
          pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(),
          pod.getStatus().getPodIP());
    }
    return addresses;
  }

  private static List<Pod> pods(KubernetesClient client) {
    return NAMESPACES.stream()
        .flatMap(ns -> client.pods().inNamespace(ns).list().getItems().stream())
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private static void awaitRunning(KubernetesClient client, int count) {
    await()
        .atMost(PODS_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(() -> KipamOnRealNode.assertRunning(pods(client), count, "10.251.0."));
  }

  private static String firstLines(String text, int lines) {
    return text.lines().limit(lines).collect(Collectors.joining("\n"));
  }

  private static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }
}
