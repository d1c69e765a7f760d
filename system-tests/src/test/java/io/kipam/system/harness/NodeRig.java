package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One registered node with its kipam-node process and the installed executable, for ITs about the
 * node's blocks. Pod {@code i} lives in namespace {@code i % n} of the rig's n (three unless told
 * otherwise), so addresses of one pool are held in several namespaces, where no 409 hides a
 * duplicate.
 */
public final class NodeRig implements AutoCloseable {

  public final String node;
  public final DaemonProcess daemon;
  public final Path kipam;
  private final KubernetesClient client;
  private final List<String> namespaces;
  private final Map<Integer, Pod> pods = new java.util.concurrent.ConcurrentHashMap<>();
  private final String statusPool;
  private final RuntimeRetries retries = new RuntimeRetries();

  private NodeRig(
      KubernetesClient client,
      String node,
      DaemonProcess daemon,
      Path kipam,
      List<String> namespaces,
      String statusPool) {
    this.client = client;
    this.node = node;
    this.daemon = daemon;
    this.kipam = kipam;
    this.namespaces = namespaces;
    this.statusPool = statusPool;
  }

  /**
   * Registers a node, starts its daemon with {@code env} and waits until it is ready ({@code pool}
   * is any Ready pool, for the STATUS call).
   */
  public static NodeRig start(
      ControlPlane controlPlane,
      KubernetesClient client,
      Path dir,
      List<String> namespaces,
      String pool,
      Map<String, String> env)
      throws Exception {
    return start(client, dir, namespaces, pool, env, node -> controlPlane.adminKubeconfig());
  }

  /**
   * A node of its own, as a test class starts one for all its tests: its kipam-node on the admin's
   * credentials, logging into a new temporary directory, its pods over three new namespaces
   * prefixed {@code name}; ready ({@code pool} is any Ready pool).
   */
  public static NodeRig startAlone(KubernetesClient client, String name, String pool)
      throws Exception {
    ControlPlane controlPlane = ControlPlane.shared();
    Path dir = java.nio.file.Files.createTempDirectory("kipam-" + name + "-it");
    return start(controlPlane, client, dir, namespaces(client, name), pool, Map.of());
  }

  /**
   * As above, with the daemon's credentials from {@code kubeconfig}, asked once the Node is
   * registered (a token can be bound to the Node only once it exists).
   */
  public static NodeRig start(
      KubernetesClient client,
      Path dir,
      List<String> namespaces,
      String pool,
      Map<String, String> env,
      Function<String, Path> kubeconfig)
      throws Exception {
    NodeRig rig = launch(client, dir, namespaces, pool, env, kubeconfig);
    rig.awaitReady();
    return rig;
  }

  /**
   * As {@link #start}, without waiting for the daemon: several rigs launched one after the other
   * start their JVMs at once, and {@link #awaitReady} then waits for each. The caller closes the
   * rig also when it never gets ready.
   */
  public static NodeRig launch(
      KubernetesClient client,
      Path dir,
      List<String> namespaces,
      String pool,
      Map<String, String> env,
      Function<String, Path> kubeconfig)
      throws Exception {
    return launch(client, dir, namespaces, pool, env, kubeconfig, daemon -> {});
  }

  /**
   * As above, the daemon given {@code setup} before it starts (JVM options, class data sharing).
   */
  public static NodeRig launch(
      KubernetesClient client,
      Path dir,
      List<String> namespaces,
      String pool,
      Map<String, String> env,
      Function<String, Path> kubeconfig,
      Consumer<DaemonProcess> setup)
      throws Exception {
    String node = Fixtures.uniqueName("node");
    Fixtures.registerNode(client, node);
    DaemonProcess daemon = new DaemonProcess(dir, node, kubeconfig.apply(node));
    env.forEach(daemon::withEnv);
    setup.accept(daemon);
    Path kipam = Installer.install(dir.resolve(node).resolve("bin"), daemon.socket);
    daemon.start();
    return new NodeRig(client, node, daemon, kipam, namespaces, pool);
  }

  /**
   * {@code count} nodes with kipam-node processes on the admin's credentials, launched at once and
   * each awaited ready; added to {@code into} as they are launched, so the caller closes them also
   * when one never gets ready.
   */
  public static void startAll(
      ControlPlane controlPlane,
      KubernetesClient client,
      Path dir,
      List<String> namespaces,
      String pool,
      int count,
      List<NodeRig> into)
      throws Exception {
    for (int n = 0; n < count; n++) {
      into.add(
          launch(client, dir, namespaces, pool, Map.of(), node -> controlPlane.adminKubeconfig()));
    }
    for (NodeRig rig : into) {
      rig.awaitReady();
    }
  }

  /** Waits until the daemon answers a STATUS call for the rig's pool. */
  public void awaitReady() throws Exception {
    daemon.awaitReady(kipam, statusPool);
  }

  /** Three namespaces for the pods of one or more rigs. */
  public static List<String> namespaces(KubernetesClient client, String prefix) {
    return namespaces(client, prefix, 3);
  }

  /** {@code count} namespaces for the pods of one or more rigs. */
  public static List<String> namespaces(KubernetesClient client, String prefix, int count) {
    List<String> namespaces = new java.util.ArrayList<>();
    for (int q = 0; q < count; q++) {
      namespaces.add(Fixtures.namespace(client, prefix + "-q" + q));
    }
    return List.copyOf(namespaces);
  }

  /**
   * ADD for pod {@code i}. A pool made Ready a moment ago may not have reached the daemon's pool
   * watch yet (code 101, "not Ready"): that answer alone is tried again, for up to {@link
   * #POOL_NOT_READY_WITHIN}, as a runtime retries a failed sandbox; the last answer is returned,
   * and every answer is counted in {@link #retries}.
   */
  public CniCall.Outcome add(String pool, int i) {
    return add(List.of(pool), i);
  }

  /**
   * ADD for pod {@code i}, as {@link #add}: the address it got, or null when refused; for an
   * Awaitility {@code until(() -> rig.ipOrNull(pool, i), ip -> ip != null)}.
   */
  public String ipOrNull(String pool, int i) {
    CniCall.Outcome outcome = add(pool, i);
    return outcome.ok() ? outcome.ip() : null;
  }

  /** ADD for pod {@code i} with one address from each of {@code pools}, as {@link #add}. */
  public CniCall.Outcome add(List<String> pools, int i) {
    try {
      return retries.call(
          () -> call("ADD", pools, i), NodeRig::poolNotReadyYet, POOL_NOT_READY_WITHIN);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying an ADD again", e);
    }
  }

  /** How long {@link #add} tries again while the daemon has not yet seen a pool Ready. */
  public static final java.time.Duration POOL_NOT_READY_WITHIN = java.time.Duration.ofSeconds(10);

  /** The daemon's answer for a pool whose Ready has not reached its watch yet. */
  public static boolean poolNotReadyYet(CniCall.Outcome outcome) {
    return RuntimeRetries.code(outcome) == 101 && outcome.stdout().contains("is not Ready");
  }

  /**
   * ADD for pod {@code i}, tried again on "try again later" (11) and "no address left" (100) for up
   * to {@code within}, as a runtime retries a sandbox; returns the last answer. For subjects where
   * a node may rightly find no address for a while (a block or address on its way to it from
   * another node); every answer is counted in {@link #retries}, so the test can say how often it
   * found none.
   */
  public CniCall.Outcome addRetried(List<String> pools, int i, java.time.Duration within)
      throws InterruptedException {
    return addRetried(pools, i, within, RuntimeRetries.TRY_AGAIN_OR_NONE_YET);
  }

  /** As {@link #addRetried(List, int, java.time.Duration)}, tried again only on {@code retried}. */
  public CniCall.Outcome addRetried(
      List<String> pools, int i, java.time.Duration within, java.util.Set<Integer> retried)
      throws InterruptedException {
    return retries.call(
        () -> call("ADD", pools, i),
        outcome -> retried.contains(RuntimeRetries.code(outcome)) || poolNotReadyYet(outcome),
        within);
  }

  /** This rig's answers to {@link #addRetried}, by code, the ones tried again included. */
  public RuntimeRetries retries() {
    return retries;
  }

  public CniCall.Outcome del(String pool, int i) {
    return call("DEL", List.of(pool), i);
  }

  /** The namespaces of this rig's pods: pod {@code i} lives in the {@code i % n}th. */
  public List<String> namespaces() {
    return namespaces;
  }

  /** The pool STATUS is asked about when the daemon (re)starts. */
  public String statusPool() {
    return statusPool;
  }

  /** Pod {@code i} of this node, created on first use in namespace {@code i % n}. */
  public Pod pod(int i) {
    return pods.computeIfAbsent(
        i,
        k ->
            Cluster.pod(
                client,
                namespaces.get(Math.floorMod(k, namespaces.size())),
                node + "-pod-" + k,
                node));
  }

  private CniCall.Outcome call(String command, List<String> pools, int i) {
    Pod pod = pod(i);
    return CniCall.run(
        kipam,
        CniCall.env(command, node + "-c-" + i, pod),
        Cluster.config("1.1.0", daemon.socket.toString(), pools.toArray(String[]::new)));
  }

  /** Deletes pod {@code i}, as a user would; its IPAddresses go with it (garbage collector). */
  public void deletePod(int i) {
    client.resource(pods.remove(i)).withGracePeriod(0).delete();
  }

  /** SIGKILLs the daemon, starts it again and waits until it is ready. */
  public void restart() throws InterruptedException {
    daemon.kill();
    daemon.start();
    daemon.awaitReady(kipam, statusPool);
  }

  /** This node's blocks of {@code pool}. */
  public List<IPBlock> blocks(String pool) {
    return client
        .resources(IPBlock.class)
        .withLabel(ApiConstants.LABEL_POOL, pool)
        .withLabel(ApiConstants.LABEL_NODE, node)
        .list()
        .getItems();
  }

  /** This node's block of {@code pool} that holds {@code ip}. */
  public Optional<IPBlock> blockOf(String pool, String ip) {
    return blocks(pool).stream()
        .filter(b -> Cidr.parse(b.getSpec().getCidr()).contains(IpAddress.parse(ip)))
        .findFirst();
  }

  @Override
  public void close() throws InterruptedException {
    daemon.close();
  }
}
