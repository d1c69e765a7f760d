package io.kipam.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.DemoSteps;
import io.kipam.testing.Fixtures;
import io.kipam.testing.RealNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.awaitility.Awaitility;

/**
 * The README's first command ({@code ./kipam-demo}) where a real node can run: the local control
 * plane and a {@link RealNode} (kubelet, containerd, runc in a network namespace of its own), kipam
 * installed from {@code config/default} and the images the build made ({@link KipamOnRealNode}),
 * the sample pool, and a Deployment of six pods that get their addresses from kipam and give them
 * back when it is scaled to zero. The node's CNI is Multus (its thin plugin, the cluster network
 * being kipam's), so a last step applies the sample Multus network ({@code
 * config/samples/multus/storage-network.yaml}: a pool and a macvlan NetworkAttachmentDefinition on
 * the node's {@code eth1}) and runs a pod with a second interface from it, both addresses from
 * kipam.
 *
 * <p>The sample pool's CIDR is data: the node's namespace has no route out, so no packet reaches an
 * address of the pool outside it. Everything it starts is stopped on exit, also on Ctrl-C; with
 * {@code --stay} it keeps the cluster up until Ctrl-C and prints a KUBECONFIG. Exit code 0 when
 * every step held, 1 with one line naming the failed step otherwise.
 */
public final class RealNodeQuickstart {

  private static final String POOL_FILE = KipamOnRealNode.SAMPLE_POOL_FILE;
  private static final String MULTUS_FILE = "config/samples/multus/storage-network.yaml";
  private static final String NETWORK = "kipam-demo";
  private static final String NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks";
  private static final String STATUS_ANNOTATION = "k8s.v1.cni.cncf.io/network-status";
  private static final int PODS = 6;
  private static final Duration STEP_TIMEOUT = Duration.ofMinutes(4);

  private final DemoSteps steps = new DemoSteps();
  private final Path dir;
  private volatile RealNode node;
  private KipamOnRealNode kipam;
  private KubernetesClient client;
  private String namespace;

  private RealNodeQuickstart(Path dir) {
    this.dir = dir;
  }

  public static void main(String[] args) {
    boolean stay = List.of(args).contains("--stay");
    RealNodeQuickstart demo = new RealNodeQuickstart(DemoSteps.dir());
    DemoSteps.exitWith(demo::stopAll, () -> demo.run(stay));
  }

  private int run(boolean stay) {
    return steps.run(
        () -> {
          startNode();
          installKipam();
          String pool = applyPool();
          createDeployment(pool);
          scaleToZero(pool);
          secondNetwork();
          if (stay) {
            stayUp();
          }
        },
        "logs in " + dir);
  }

  private void startNode() {
    steps.step("starting the control plane and the real node");
    // Known to the shutdown hook from the start: Ctrl-C while the node starts stops it too.
    RealNode.start(started -> node = started);
    client = node.client();
    // The node's CNI is Multus, as on a cluster with secondary networks: eth0 is kipam's network,
    // and eth1 is the host interface the sample Multus network's macvlan uses.
    node.installMultus(NETWORK);
    node.addHostInterface("eth1");
    steps.progress(
        "control plane and real node "
            + RealNode.NODE_NAME
            + " up (kubelet, containerd, runc; Multus as its CNI) in network namespace "
            + node.networkNamespace());
  }

  private void installKipam() {
    steps.step("installing kipam from config/default");
    kipam = KipamOnRealNode.install(node, NETWORK, List.of(KipamOnRealNode.samplePoolName()));
    kipam.awaitReady();
    steps.progress(
        "kipam installed with kubectl apply -k (config/default): kipam-operator and kipam-node"
            + " Ready");
  }

  private String applyPool() {
    steps.step("applying " + POOL_FILE);
    String name = kipam.applySamplePool(STEP_TIMEOUT);
    steps.progress("IPPool " + name + " from " + POOL_FILE + " is Ready");
    // The pods request kipam.io/ip; the scheduler places them once the operator has published it.
    steps.step("waiting for kipam.io/ip on node " + RealNode.NODE_NAME);
    Awaitility.await().atMost(STEP_TIMEOUT).until(() -> kipam.nodeCapacity() >= PODS);
    return name;
  }

  private void createDeployment(String pool) {
    steps.step("creating a Deployment of " + PODS + " pods");
    namespace = Fixtures.namespace(client, "demo");
    client
        .apps()
        .deployments()
        .inNamespace(namespace)
        .resource(RealNodeKipamE2E.workload(namespace, "web", PODS))
        .create();
    steps.step("waiting for " + PODS + " pods to run");
    Awaitility.await()
        .atMost(STEP_TIMEOUT)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              List<Pod> pods = pods();
              return pods.size() == PODS
                  && pods.stream()
                      .allMatch(
                          p ->
                              "Running".equals(p.getStatus().getPhase())
                                  && p.getStatus().getPodIP() != null);
            });
    awaitAllocated(pool, PODS);
    steps.progress(
        "Deployment web in namespace "
            + namespace
            + ": "
            + PODS
            + " pods Running; each got its address from kipam (CNI ADD from containerd)");
    show("get", "pods", "-n", namespace, "-o", "wide");
    show("get", "ipaddresses.kipam.io", "-A");
    show("get", "ippools.kipam.io", pool);
    System.out.println();
  }

  private void scaleToZero(String pool) {
    steps.step("scaling the Deployment to 0");
    client.apps().deployments().inNamespace(namespace).withName("web").scale(0);
    Awaitility.await()
        .atMost(STEP_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () ->
                pods().isEmpty()
                    && client
                        .resources(IPAddress.class)
                        .inAnyNamespace()
                        .list()
                        .getItems()
                        .isEmpty());
    awaitAllocated(pool, 0);
    steps.progress("scaled to 0: every address is back in the pool");
    show("get", "ipaddresses.kipam.io", "-A");
    show("get", "ippools.kipam.io", pool);
    System.out.println();
  }

  /**
   * The sample Multus network, and a pod in it: eth0 from the sample pool, net1 from the Multus
   * network's pool, each its own IPAddress; deleting the pod gives both back.
   */
  private void secondNetwork() {
    steps.step("applying " + MULTUS_FILE);
    node.controlPlane()
        .kubectl(
            "apply", "-f", ControlPlaneBinaries.repositoryRoot().resolve(MULTUS_FILE).toString());
    String pool = "storage-v4";
    awaitPoolReady(pool);
    steps.progress(
        "IPPool "
            + pool
            + " and NetworkAttachmentDefinition default/storage from "
            + MULTUS_FILE
            + " applied");
    steps.step("creating pod storage-client with a second interface from network storage");
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("storage-client")
            .withNamespace("default")
            .addToAnnotations(NETWORKS_ANNOTATION, "storage")
            .endMetadata()
            .withSpec(
                RealNodeKipamE2E.workload("default", "storage-client", 1)
                    .getSpec()
                    .getTemplate()
                    .getSpec())
            .build();
    client.resource(pod).create();
    Pod running =
        Awaitility.await()
            .atMost(STEP_TIMEOUT)
            .pollInterval(Duration.ofMillis(250))
            .until(
                () -> client.pods().inNamespace("default").withName("storage-client").get(),
                p ->
                    p != null
                        && "Running".equals(p.getStatus().getPhase())
                        && p.getMetadata().getAnnotations().containsKey(STATUS_ANNOTATION));
    Map<String, String> interfaces = new TreeMap<>();
    for (IPAddress address :
        client.resources(IPAddress.class).inNamespace("default").list().getItems()) {
      if (address.getSpec().getPod() != null
          && running.getMetadata().getUid().equals(address.getSpec().getPod().getUid())) {
        interfaces.put(address.getSpec().getInterfaceName(), address.getSpec().getPool());
      }
    }
    if (!interfaces.equals(Map.of("eth0", KipamOnRealNode.samplePoolName(), "net1", pool))) {
      throw new IllegalStateException(
          "pod default/storage-client holds the IPAddresses " + interfaces + " (interface=pool)");
    }
    steps.progress(
        "pod default/storage-client Running: eth0 from "
            + KipamOnRealNode.samplePoolName()
            + " and net1 from "
            + pool
            + ", both given by kipam (Multus called it once per interface)");
    show("get", "ipaddresses.kipam.io", "-n", "default", "-o", "wide");
    show(
        "get",
        "pod",
        "storage-client",
        "-n",
        "default",
        "-o",
        "jsonpath={.metadata.annotations.k8s\\.v1\\.cni\\.cncf\\.io/network-status}");
    System.out.println();
    steps.step("deleting pod storage-client");
    client.resource(running).delete();
    Awaitility.await()
        .atMost(STEP_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () ->
                client.pods().inNamespace("default").withName("storage-client").get() == null
                    && client
                        .resources(IPAddress.class)
                        .inAnyNamespace()
                        .list()
                        .getItems()
                        .isEmpty());
    steps.progress("pod storage-client deleted: both its addresses are back");
    show("get", "ipaddresses.kipam.io", "-A");
    System.out.println();
  }

  private void awaitPoolReady(String pool) {
    steps.step("waiting for IPPool " + pool + " to be Ready");
    kipam.awaitPoolReady(pool, STEP_TIMEOUT);
  }

  private List<Pod> pods() {
    return client.pods().inNamespace(namespace).list().getItems();
  }

  /** Waits until the pool's status counts {@code allocated} addresses. */
  private void awaitAllocated(String pool, long allocated) {
    steps.step("waiting for pool " + pool + " to count " + allocated + " addresses");
    DemoSteps.awaitCount(STEP_TIMEOUT, () -> allocatedOf(pool), allocated);
  }

  /** The addresses the pool's status counts; null before it counts any. */
  private Long allocatedOf(String pool) {
    IPPool p = client.resources(IPPool.class).withName(pool).get();
    return p.getStatus() == null ? null : p.getStatus().getAllocated();
  }

  /**
   * Prints a kubectl command and what it printed (on stdout or, like "No resources found", not).
   */
  private void show(String... args) {
    steps.step("running kubectl " + String.join(" ", args));
    System.out.println();
    System.out.println("  $ kubectl " + String.join(" ", args));
    List<String> command = new ArrayList<>();
    command.add(node.controlPlane().binary("kubectl").toString());
    command.add("--kubeconfig=" + node.kubeconfig());
    command.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor();
      out.lines().forEach(l -> System.out.println("  " + l));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kubectl", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running kubectl", e);
    }
  }

  private void stayUp() throws InterruptedException {
    steps.stayUp(node.kubeconfig(), node.controlPlane().binary("kubectl") + " get pods -A -o wide");
  }

  /** Stops the node (its pods first, so their addresses go through CNI DEL) and kipam's dirs. */
  private void stopAll() {
    if (node != null) {
      node.close();
      node = null;
    }
    if (kipam != null) {
      kipam.close();
      kipam = null;
    }
  }
}
