package io.kipam.system.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.CnitoolRuntime;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.Exec;
import io.kipam.system.harness.Installer;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.DemoSteps;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;

/**
 * The README's first command ({@code ./kipam-demo}): kipam doing its job on a local cluster. It
 * starts the local control plane, kipam-operator as a process and two simulated nodes (a Node
 * object and one kipam-node each), applies the sample pool, gives six pods their addresses by
 * calling the real {@code kipam} executable as a container runtime does, and gives them back: half
 * through CNI DEL, half through the garbage collector after a forced delete. As root, with
 * iproute2, the calls go through {@code cnitool} and the {@code bridge} plugin in network
 * namespaces it creates; otherwise the executable is called directly, and the first line says why.
 *
 * <p>Everything it starts lives in a directory of its own, on free loopback ports, and is stopped
 * on exit, also on Ctrl-C. With {@code --stay} it keeps the cluster up until Ctrl-C and prints a
 * KUBECONFIG to explore it with. Exit code 0 when every step held, 1 with one line naming the
 * failed step and the logs otherwise.
 */
public final class Quickstart {

  private static final String POOL_FILE = "config/samples/ippool-ipv4.yaml";
  private static final int PODS = 6;
  private static final Duration STEP_TIMEOUT = Duration.ofSeconds(120);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final DemoSteps steps = new DemoSteps();
  private final Path dir;
  private final List<AutoCloseable> toStop = new ArrayList<>();
  private final List<SimulatedNode> nodes = new ArrayList<>();
  private boolean throughCnitool;
  private ControlPlane controlPlane;
  private KubernetesClient client;
  private String namespace;

  private Quickstart(Path dir) {
    this.dir = dir;
  }

  /**
   * A simulated node: its kipam-node, the installed executable and, as root, a runtime whose calls
   * go through cnitool and bridge.
   */
  private record SimulatedNode(
      String name, DaemonProcess daemon, Path kipam, CnitoolRuntime runtime) {}

  /** A pod the demo created, with the sandbox namespace it got (null when called directly). */
  private record DemoPod(Pod pod, SimulatedNode node, String netns, String address) {}

  public static void main(String[] args) throws Exception {
    for (String a : args) {
      if (!a.equals("--stay")) {
        System.out.println("kipam-demo: unknown argument " + a + " (the only option is --stay)");
        System.exit(2);
      }
    }
    boolean stay = args.length > 0;
    Quickstart demo = new Quickstart(DemoSteps.dir());
    DemoSteps.exitWith(demo::stopAll, () -> demo.run(stay));
  }

  private int run(boolean stay) {
    return steps.run(
        () -> {
          System.out.println(chooseRuntime());
          startCluster();
          String pool = applyPool();
          List<DemoPod> pods = givePodsAddresses(pool);
          giveAddressesBack(pool, pods);
          if (stay) {
            stayUp();
          }
        },
        "the logs of every process are in " + dir);
  }

  /** Whether the calls go through cnitool and bridge; the line says which, and why not. */
  private String chooseRuntime() {
    steps.step("choosing how to call the kipam executable");
    if (!Exec.run("id", "-u").stdout().trim().equals("0")) {
      return "kipam-demo: not root, so no network namespaces: the kipam executable is called"
          + " directly, as a container runtime calls it";
    }
    if (Exec.run("ip", "netns", "list").exit() != 0) {
      return "kipam-demo: `ip netns` does not work here: the kipam executable is called directly";
    }
    try {
      steps.progress("building the CNI reference tools (cnitool, bridge), or reusing them");
      CnitoolRuntime.tools();
    } catch (RuntimeException e) {
      return "kipam-demo: the CNI reference tools could not be built ("
          + DemoSteps.firstLine(e)
          + "): the kipam executable is called directly";
    }
    throughCnitool = true;
    return "kipam-demo: root: cnitool runs the bridge plugin, which calls kipam, for each pod in a"
        + " network namespace of the demo's own";
  }

  private void startCluster() throws Exception {
    steps.step("starting the control plane");
    controlPlane = ControlPlane.shared();
    client = controlPlane.client();
    steps.progress(
        "control plane up (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) at "
            + controlPlane.apiServerUrl());

    steps.step("installing kipam's CRDs from config/crd");
    KipamCrds.install(client);
    steps.progress("kipam's CRDs installed: IPPool, IPBlock, IPAddress");

    steps.step("starting kipam-operator");
    OperatorProcess operator = new OperatorProcess(dir, controlPlane.adminKubeconfig(), client);
    toStop.add(operator);
    operator.startLeading(Map.of(), STEP_TIMEOUT);
    steps.progress("kipam-operator running as its own process and leading");
  }

  private String applyPool() throws Exception {
    steps.step("applying " + POOL_FILE);
    IPPool pool;
    try (InputStream in =
        Files.newInputStream(ControlPlaneBinaries.repositoryRoot().resolve(POOL_FILE))) {
      pool = client.resources(IPPool.class).load(in).item();
    }
    client.resource(pool).create();
    String name = pool.getMetadata().getName();
    Awaitility.await().atMost(STEP_TIMEOUT).until(() -> "True".equals(condition(name, "Ready")));
    steps.progress("IPPool " + name + " from " + POOL_FILE + " is Ready");

    for (String node : List.of("node-a", "node-b")) {
      steps.step("starting kipam-node on " + node);
      Fixtures.registerNode(client, node);
      DaemonProcess daemon =
          new DaemonProcess(dir, node, controlPlane.adminKubeconfig())
              .withEnv("KIPAM_BLOCK_STATUS_SECONDS", "1");
      toStop.add(daemon);
      Path kipam = Installer.install(dir.resolve(node).resolve("bin"), daemon.socket);
      daemon.start();
      daemon.awaitReady(kipam, name);
      CnitoolRuntime runtime = null;
      if (throughCnitool) {
        runtime =
            new CnitoolRuntime(
                dir.resolve(node), "kipam-demo", "kipam-" + node, kipam, daemon.socket, name);
        toStop.add(runtime);
      }
      nodes.add(new SimulatedNode(node, daemon, kipam, runtime));
    }
    steps.progress(
        "nodes node-a and node-b registered, kipam-node running on each, kipam installed");
    return name;
  }

  private String condition(String pool, String type) {
    IPPool p = client.resources(IPPool.class).withName(pool).get();
    if (p == null || p.getStatus() == null) {
      return "";
    }
    return p.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .map(c -> c.getStatus())
        .findFirst()
        .orElse("");
  }

  private List<DemoPod> givePodsAddresses(String pool) throws Exception {
    steps.step("creating a namespace and " + PODS + " pods");
    namespace = Fixtures.namespace(client, "demo");
    List<DemoPod> pods = new ArrayList<>();
    for (int i = 0; i < PODS; i++) {
      SimulatedNode node = nodes.get(i % nodes.size());
      Pod pod = Cluster.pod(client, namespace, "web-" + i, node.name());
      steps.step("ADD for pod " + namespace + "/web-" + i + " on " + node.name());
      pods.add(add(pool, node, pod));
    }
    steps.progress(
        PODS + " pods created and bound to the nodes; each got its address from kipam (CNI ADD)");
    steps.step("waiting for the pool's counts");
    awaitAllocated(pool, PODS);
    System.out.println();
    System.out.printf("  %-22s %-8s %-18s %s%n", "POD", "NODE", "IP", "SANDBOX");
    for (DemoPod p : pods) {
      System.out.printf(
          "  %-22s %-8s %-18s %s%n",
          namespace + "/" + p.pod().getMetadata().getName(),
          p.node().name(),
          p.address(),
          p.netns() == null ? "(called directly)" : "netns " + p.netns());
    }
    showKubectl(pool);
    return pods;
  }

  private DemoPod add(String pool, SimulatedNode node, Pod pod) throws Exception {
    String name = pod.getMetadata().getName();
    if (node.runtime() != null) {
      String netns = node.runtime().netns(name);
      Exec.Result added = node.runtime().add(netns, pod).orFail();
      String address = JSON.readTree(added.stdout()).path("ips").get(0).path("address").asText();
      return new DemoPod(pod, node, netns, address);
    }
    CniCall.Outcome outcome = CniCall.run(node.kipam(), env("ADD", pod), config(pool, node));
    if (!outcome.ok()) {
      throw new IllegalStateException("kipam answered " + outcome.stdout().strip());
    }
    JsonNode ip = JSON.readTree(outcome.stdout()).path("ips").get(0);
    return new DemoPod(pod, node, null, ip.path("address").asText());
  }

  private void del(String pool, DemoPod p) throws Exception {
    if (p.node().runtime() != null) {
      p.node().runtime().del(p.netns(), p.pod()).orFail();
      return;
    }
    CniCall.Outcome outcome =
        CniCall.run(p.node().kipam(), env("DEL", p.pod()), config(pool, p.node()));
    if (!outcome.ok()) {
      throw new IllegalStateException("kipam answered " + outcome.stdout().strip());
    }
  }

  private static Map<String, String> env(String command, Pod pod) {
    return CniCall.env(command, "demo-" + pod.getMetadata().getName(), pod);
  }

  private static String config(String pool, SimulatedNode node) {
    return Cluster.config("1.1.0", node.daemon().socket.toString(), pool)
        .replace("kipam-test", "kipam-demo");
  }

  private void giveAddressesBack(String pool, List<DemoPod> pods) throws Exception {
    List<DemoPod> deleted = pods.subList(0, pods.size() / 2);
    List<DemoPod> forced = pods.subList(pods.size() / 2, pods.size());
    for (DemoPod p : deleted) {
      steps.step("DEL for pod " + namespace + "/" + p.pod().getMetadata().getName());
      del(pool, p);
      client.resource(p.pod()).withGracePeriod(0).delete();
    }
    steps.progress(
        deleted.size()
            + " pods stopped as kubelet stops them: CNI DEL, then the Pod deleted; their addresses"
            + " are free");
    steps.step("force-deleting the other pods and waiting for the garbage collector");
    for (DemoPod p : forced) {
      client.resource(p.pod()).withGracePeriod(0).delete();
    }
    Awaitility.await()
        .atMost(STEP_TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> addresses().isEmpty());
    steps.progress(
        forced.size()
            + " pods force-deleted with no CNI DEL: Kubernetes' garbage collector removed the"
            + " IPAddresses they owned");
    steps.step("waiting for the pool's counts");
    awaitAllocated(pool, 0);
    steps.progress("every address is back in the pool");
    showKubectl(pool);
  }

  /** Waits until the pool's status counts {@code allocated} addresses (the daemons report them). */
  private void awaitAllocated(String pool, long allocated) {
    DemoSteps.awaitCount(STEP_TIMEOUT, () -> allocatedOf(pool), allocated);
  }

  /** The addresses the pool's status counts; null before it counts any. */
  private Long allocatedOf(String pool) {
    IPPool p = client.resources(IPPool.class).withName(pool).get();
    return p.getStatus() == null ? null : p.getStatus().getAllocated();
  }

  private List<IPAddress> addresses() {
    return client.resources(IPAddress.class).inAnyNamespace().list().getItems();
  }

  private void showKubectl(String pool) {
    steps.step("running kubectl");
    System.out.println();
    System.out.println("  $ kubectl get ipaddresses.kipam.io -A");
    System.out.print(indent(kubectl("get", "ipaddresses.kipam.io", "-A")));
    System.out.println("  $ kubectl get ippools.kipam.io " + pool);
    System.out.print(indent(kubectl("get", "ippools.kipam.io", pool)));
    System.out.println();
  }

  private String kubectl(String... args) {
    List<String> command = new ArrayList<>();
    command.add(controlPlane.binary("kubectl").toString());
    command.add("--kubeconfig=" + controlPlane.adminKubeconfig());
    command.addAll(List.of(args));
    Exec.Result result = Exec.run(command, Map.of(), "");
    return result.stdout().isBlank() ? result.stderr() : result.stdout();
  }

  private static String indent(String text) {
    StringBuilder out = new StringBuilder();
    text.lines().forEach(l -> out.append("  ").append(l).append('\n'));
    return out.toString();
  }

  private void stayUp() throws InterruptedException {
    steps.stayUp(
        controlPlane.adminKubeconfig(),
        controlPlane.binary("kubectl") + " get ipaddresses.kipam.io -A");
  }

  /** Stops every process the demo started and deletes its network namespaces; runs on exit. */
  private void stopAll() {
    for (int i = toStop.size() - 1; i >= 0; i--) {
      try {
        toStop.get(i).close();
      } catch (Exception e) {
        System.out.println(
            "kipam-demo: could not stop " + toStop.get(i) + ": " + DemoSteps.firstLine(e));
      }
    }
    toStop.clear();
    // The control plane stops in its own shutdown hook.
  }
}
