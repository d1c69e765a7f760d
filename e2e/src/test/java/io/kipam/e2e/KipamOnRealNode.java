package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.RealNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam installed on a {@link RealNode} the way a cluster administrator installs it: the image
 * tarballs the build wrote are imported into the node's containerd, a network configuration whose
 * IPAM is kipam is put in the node's CNI conf directory, and {@code kubectl apply -k} applies an
 * overlay of {@code config/default}. The overlay changes only what this node needs:
 *
 * <ul>
 *   <li>{@code KUBERNETES_SERVICE_HOST} and {@code KUBERNETES_SERVICE_PORT} on both workloads,
 *       since the node has no kube-proxy to make the {@code kubernetes} Service's address work (as
 *       on any kube-proxy-less cluster, the host-network agents are told the API server's address);
 *   <li>the host paths of kipam-node: the node's own CNI bin directory instead of {@code
 *       /opt/cni/bin}, and directories of this fixture for the socket and the state, so nothing is
 *       left on the machine; the installer writes the socket's host path into {@code kipam.conf}.
 * </ul>
 */
final class KipamOnRealNode implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KipamOnRealNode.class);

  static final String NAMESPACE = "kipam-system";

  /** The sample pool the README, the docs and the quickstart use. */
  static final String SAMPLE_POOL_FILE = "config/samples/ippool-ipv4.yaml";

  private static final String PAUSED = "kipam.io/e2e-node-daemon-paused";
  private static final Duration READY_TIMEOUT = Duration.ofMinutes(3);

  private final RealNode node;
  private final Path hostDir;

  private KipamOnRealNode(RealNode node, Path hostDir) {
    this.node = node;
    this.hostDir = hostDir;
  }

  /** Installs kipam on {@code node}; its pods use the pools named in {@code pools}. */
  static KipamOnRealNode install(RealNode node, String network, List<String> pools) {
    return install(node, conflist(network, pools));
  }

  /** Installs kipam on {@code node}; its pods' network is {@code networkConfig}, a conflist. */
  static KipamOnRealNode install(RealNode node, String networkConfig) {
    KipamOnRealNode kipam = prepare(node, networkConfig);
    node.controlPlane().kubectl("apply", "--server-side", "-k", kipam.overlay().toString());
    return kipam;
  }

  /**
   * Everything {@link #install} does but the install itself: the images in the node's containerd,
   * the network configuration in place, the node Ready. The caller installs kipam (with {@link
   * #helmValues} for the chart).
   */
  static KipamOnRealNode prepare(RealNode node, String network, List<String> pools) {
    return prepare(node, conflist(network, pools));
  }

  private static KipamOnRealNode prepare(RealNode node, String networkConfig) {
    Path hostDir;
    try {
      hostDir = Files.createTempDirectory("kipam-host-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the host directories for kipam-node", e);
    }
    KipamOnRealNode kipam = new KipamOnRealNode(node, hostDir);
    Path images = Path.of(System.getProperty("kipam.imagesDir", "../images/target"));
    for (String image : List.of("kipam-operator-image.tar", "kipam-node-image.tar")) {
      Path tarball = images.resolve(image);
      if (!Files.isRegularFile(tarball)) {
        throw new IllegalStateException(
            tarball
                + " is missing: build the images first (./mvnw -B install -DskipUnit"
                + " -DskipIT -DskipE2E), see docs/images.md");
      }
      node.importImage(tarball);
    }
    node.writeNetworkConfig("10-kipam.conflist", networkConfig);
    node.awaitReady();
    return kipam;
  }

  /**
   * Values for charts/kipam that change what the overlay of {@link #install} changes, the same way:
   * the API server's address for both workloads, and kipam-node's host paths.
   */
  String helmValues() {
    String apiEnv =
        "{KUBERNETES_SERVICE_HOST: \"%s\", KUBERNETES_SERVICE_PORT: \"%d\"}"
            .formatted(RealNode.ADDRESS, node.controlPlane().apiServerPort());
    return """
        operator:
          env: %s
        node:
          env: %s
        cni:
          binDir: "%s"
          socket: "%s"
          stateDir: "%s"
        """
        .formatted(apiEnv, apiEnv, node.cniBinDir(), socket(), hostDir.resolve("state"));
  }

  /**
   * The CNI network configuration: the bridge plugin with kipam as its IPAM, and the StatefulSet
   * option on (a StatefulSet's pods keep their addresses; other pods are not affected).
   */
  static String conflist(String network, List<String> pools) {
    String poolList = String.join("\", \"", pools);
    return """
        {
          "cniVersion": "1.0.0",
          "name": "%s",
          "plugins": [
            {
              "type": "bridge",
              "bridge": "kipam-br0",
              "isGateway": true,
              "ipam": {"type": "kipam", "pools": ["%s"], "statefulSetClaims": true}
            }
          ]
        }
        """
        .formatted(network, poolList);
  }

  /**
   * A network configuration of {@code bridge} with kipam (pool {@code pool}) that does not make the
   * bridge the pods' gateway: for a node whose pods come from several pools on one bridge, which
   * holds one IPv4 address.
   */
  static String bridgeWithoutGateway(String network, String pool) {
    return """
        {
          "cniVersion": "1.0.0",
          "name": "%s",
          "plugins": [
            {"type": "bridge", "bridge": "kipam-br0", "ipam": {"type": "kipam", "pools": ["%s"]}}
          ]
        }
        """
        .formatted(network, pool);
  }

  /** Where kipam-node's socket is on the host (and in {@code kipam.conf}). */
  Path socket() {
    return hostDir.resolve("run/kipam.sock");
  }

  private Path overlay() {
    Path config = Path.of(System.getProperty("kipam.configDir", "../config")).toAbsolutePath();
    Path dir = hostDir.resolve("overlay");
    // kustomize accepts a base only by a relative path.
    Path base = dir.relativize(config.resolve("default").normalize());
    String apiHost = RealNode.ADDRESS;
    int apiPort = node.controlPlane().apiServerPort();
    // Indented to sit under a container of the patches below.
    String apiEnv =
        String.join(
            "\n",
            "                env:",
            "                  - {name: KUBERNETES_SERVICE_HOST, value: \"" + apiHost + "\"}",
            "                  - {name: KUBERNETES_SERVICE_PORT, value: \"" + apiPort + "\"}");
    String kustomization =
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
          - %s
        patches:
          - patch: |-
              apiVersion: apps/v1
              kind: Deployment
              metadata: {name: kipam-operator, namespace: kipam-system}
              spec:
                template:
                  spec:
                    containers:
                      - name: operator
        %s
          - patch: |-
              apiVersion: apps/v1
              kind: DaemonSet
              metadata: {name: kipam-node, namespace: kipam-system}
              spec:
                template:
                  spec:
                    initContainers:
                      - name: install-cni
                        env:
                          - {name: KIPAM_SOCKET, value: "%s"}
                    containers:
                      - name: kipam-node
        %s
                    volumes:
                      - name: socket-dir
                        hostPath: {path: "%s"}
                      - name: state-dir
                        hostPath: {path: "%s"}
                      - name: cni-bin
                        hostPath: {path: "%s"}
        """
            .formatted(
                base,
                apiEnv,
                socket(),
                apiEnv,
                socket().getParent(),
                hostDir.resolve("state"),
                node.cniBinDir());
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("kustomization.yaml"), kustomization);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the overlay in " + dir, e);
    }
    return dir;
  }

  /** Waits until kipam-operator and kipam-node run and are Ready. */
  void awaitReady() {
    KubernetesClient client = node.client();
    try {
      await()
          .atMost(READY_TIMEOUT)
          .untilAsserted(
              () -> {
                for (String app : List.of("kipam-operator", "kipam-node")) {
                  List<Pod> pods =
                      client
                          .pods()
                          .inNamespace(NAMESPACE)
                          .withLabel("app.kubernetes.io/name", app)
                          .list()
                          .getItems();
                  assertThat(pods).as(app).isNotEmpty().allMatch(KipamOnRealNode::isReady);
                }
              });
    } catch (AssertionError | RuntimeException e) {
      log.error(
          "kipam is not Ready:\n{}\n{}",
          node.controlPlane().kubectl("get", "pods", "-A", "-o", "wide"),
          node.controlPlane().kubectl("describe", "pods", "-n", NAMESPACE));
      throw e;
    }
  }

  /** The sample pool's name, as its file writes it. */
  static String samplePoolName() {
    Path file = ControlPlaneBinaries.repositoryRoot().resolve(SAMPLE_POOL_FILE);
    try (InputStream in = Files.newInputStream(file)) {
      return Serialization.unmarshal(in, IPPool.class).getMetadata().getName();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + SAMPLE_POOL_FILE, e);
    }
  }

  /** Applies the sample pool with kubectl, waits until it is Ready and returns its name. */
  String applySamplePool(Duration within) {
    Path file = ControlPlaneBinaries.repositoryRoot().resolve(SAMPLE_POOL_FILE);
    node.controlPlane().kubectl("apply", "-f", file.toString());
    String name = samplePoolName();
    awaitPoolReady(name, within);
    return name;
  }

  /** Waits until IPPool {@code name} is Ready (kipam-operator checked it). */
  void awaitPoolReady(String name, Duration within) {
    await()
        .atMost(within)
        .until(
            () -> {
              IPPool p = node.client().resources(IPPool.class).withName(name).get();
              return p != null
                  && p.getStatus() != null
                  && p.getStatus().getConditions().stream()
                      .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
            });
  }

  /** What the operator publishes as {@code kipam.io/ip} on the node: the scheduler's count. */
  long nodeCapacity() {
    Quantity quantity =
        node.client()
            .nodes()
            .withName(RealNode.NODE_NAME)
            .get()
            .getStatus()
            .getAllocatable()
            .get("kipam.io/ip");
    return quantity == null ? 0 : quantity.getNumericalAmount().longValue();
  }

  static boolean isReady(Pod pod) {
    return pod.getStatus() != null
        && "Running".equals(pod.getStatus().getPhase())
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** Takes kipam-node off the node (a nodeSelector no Node matches) and waits until it is gone. */
  void pauseNodeDaemon() {
    daemonNodeSelector(Map.of(PAUSED, "true"));
    await()
        .atMost(READY_TIMEOUT)
        .until(
            () ->
                node.client()
                    .pods()
                    .inNamespace(NAMESPACE)
                    .withLabel("app.kubernetes.io/name", "kipam-node")
                    .list()
                    .getItems()
                    .isEmpty());
  }

  /** Undoes {@link #pauseNodeDaemon()}; {@link #awaitReady()} waits for the new daemon. */
  void resumeNodeDaemon() {
    daemonNodeSelector(null);
  }

  /** Sets the kipam-node DaemonSet's pod nodeSelector ({@code null}: none). */
  private void daemonNodeSelector(Map<String, String> selector) {
    node.client()
        .apps()
        .daemonSets()
        .inNamespace(NAMESPACE)
        .withName("kipam-node")
        .edit(
            ds -> {
              ds.getSpec().getTemplate().getSpec().setNodeSelector(selector);
              return ds;
            });
  }

  /** The kipam-node pod of the node. */
  Pod nodeDaemonPod() {
    return node
        .client()
        .pods()
        .inNamespace(NAMESPACE)
        .withLabel("app.kubernetes.io/name", "kipam-node")
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .findFirst()
        .orElseThrow();
  }

  /**
   * Closes {@code node}, then removes {@code kipam}'s host directories, each only if it was started
   * (not null): the teardown of a class whose set-up may have stopped halfway.
   */
  static void closeAfter(RealNode node, KipamOnRealNode kipam) {
    if (node != null) {
      node.close();
    }
    if (kipam != null) {
      kipam.close();
    }
  }

  /**
   * The teardown of a class whose workloads live in {@code namespaces}: their Deployments and pods
   * go first, while kipam-node still answers their CNI DEL, then {@link #closeAfter}.
   */
  static void closeAfterWorkloads(RealNode node, KipamOnRealNode kipam, List<String> namespaces) {
    if (kipam != null) {
      KubernetesClient client = node.client();
      try {
        for (String ns : namespaces) {
          client.apps().deployments().inNamespace(ns).delete();
          client.pods().inNamespace(ns).delete();
        }
        await()
            .atMost(Duration.ofMinutes(1))
            .until(
                () ->
                    namespaces.stream()
                        .allMatch(ns -> client.pods().inNamespace(ns).list().getItems().isEmpty()));
      } catch (RuntimeException e) {
        System.out.printf("the test's pods did not all go before teardown: %s%n", e);
      }
    }
    closeAfter(node, kipam);
  }

  /**
   * The spec of a pod running the node's workload image (a program that waits to be stopped),
   * stopped within 2 s.
   */
  static PodSpec workloadPodSpec() {
    return new PodSpecBuilder()
        .withTerminationGracePeriodSeconds(2L)
        .addNewContainer()
        .withName("workload")
        .withImage("kipam.io/workload:1")
        .withImagePullPolicy("Never")
        .endContainer()
        .build();
  }

  /**
   * The pod {@code namespace/name} once Running, not being deleted, other than {@code notUid}
   * (null: any), and {@code ready} (an address, a network status).
   */
  static Pod awaitRunningPod(
      KubernetesClient client,
      String namespace,
      String name,
      String notUid,
      Predicate<Pod> ready,
      Duration within) {
    return await()
        .atMost(within)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> client.pods().inNamespace(namespace).withName(name).get(),
            p ->
                p != null
                    && !p.getMetadata().getUid().equals(notUid)
                    && p.getMetadata().getDeletionTimestamp() == null
                    && "Running".equals(p.getStatus().getPhase())
                    && ready.test(p));
  }

  /** Asserts {@code count} pods, every one Running with an address starting {@code ipPrefix}. */
  static void assertRunning(List<Pod> pods, int count, String ipPrefix) {
    assertThat(pods).hasSize(count);
    assertThat(pods)
        .allSatisfy(
            p -> {
              assertThat(p.getStatus().getPhase()).isEqualTo("Running");
              assertThat(p.getStatus().getPodIP()).startsWith(ipPrefix);
            });
  }

  /** Removes the host directories; call after the node is closed (its pods are gone then). */
  @Override
  public void close() {
    try (Stream<Path> paths = Files.walk(hostDir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not remove {}: {}", hostDir, e.toString());
    }
  }
}
