package io.kipam.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler, started from the binaries {@link ControlPlaneBinaries} provides, each on a free
 * port of 127.0.0.1 and with its own log file.
 *
 * <p>kube-controller-manager runs only the controllers kipam's behaviour depends on (garbage
 * collection, namespace deletion, service accounts, pod GC) and not the node lifecycle controller,
 * which would taint and evict the kubelet-less Node objects tests register. {@link #shared()}
 * starts one control plane per JVM and stops it when the JVM exits; tests share it and keep to
 * their own namespaces and names.
 */
public final class ControlPlane implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ControlPlane.class);

  /** Controllers of kube-controller-manager that run; see the class comment for why not all. */
  static final List<String> CONTROLLERS =
      List.of(
          "garbage-collector-controller",
          "namespace-controller",
          "serviceaccount-controller",
          "serviceaccount-token-controller",
          "pod-garbage-collector-controller",
          "clusterrole-aggregation-controller",
          "root-ca-certificate-publisher-controller",
          "validatingadmissionpolicy-status-controller",
          // StatefulSets make the pods whose addresses kipam keeps with the statefulSetClaims
          // option (StatefulSetClaimsIT); no other test makes one.
          "statefulset-controller");

  /**
   * Controllers of a control plane for a real node: also those that turn Deployments and DaemonSets
   * into pods, since kipam is installed on it as real workloads, and the node lifecycle controller,
   * which takes the {@code node.kubernetes.io/not-ready} taint kubelet registers its Node with off
   * once the Node is Ready (until then the scheduler places nothing there). The ITs' Nodes have no
   * kubelet: that controller would taint them and pods made for them never start.
   */
  static final List<String> REAL_NODE_CONTROLLERS =
      Stream.concat(
              CONTROLLERS.stream(),
              Stream.of(
                  "deployment-controller",
                  "replicaset-controller",
                  "daemonset-controller",
                  "node-lifecycle-controller"))
          .toList();

  private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

  /** How long {@link #stopApiServer()} lets kube-apiserver shut down before it kills it. */
  public static final Duration API_SERVER_GRACE = Duration.ofSeconds(2);

  private static ControlPlane shared;

  private final Path binaries;
  private final Path workDir;
  private final ControlPlaneFiles files;
  private final int apiServerPort;
  private final ManagedProcess etcd;
  private final ManagedProcess apiServer;
  private final ManagedProcess controllerManager;
  private final ManagedProcess scheduler;
  private final int controllerManagerPort;
  private final int schedulerPort;
  private final int etcdClientPort;
  private final String netns;
  private final String address;
  private final ManagedProcess bridgeFarSide;
  private NamespaceBridge bridge;
  private KubernetesClient client;

  /**
   * The control plane of this JVM, started on first use and stopped when the JVM exits. Ports are
   * chosen free and bound a moment later by another process; an outgoing connection may take one as
   * its local port meanwhile. A start that failed only because a port was taken is tried again with
   * fresh ports, at most three times.
   */
  public static synchronized ControlPlane shared() {
    if (shared == null) {
      ControlPlane started = fresh();
      Runtime.getRuntime().addShutdownHook(new Thread(started::close, "control-plane-stop"));
      shared = started;
    }
    return shared;
  }

  /**
   * A control plane of the caller's own, started now, which the caller closes: for a test that
   * needs a cluster holding nothing but its own objects (every Node, every pool). Ports as in
   * {@link #shared()}.
   */
  public static ControlPlane fresh() {
    return fresh(List.of());
  }

  /**
   * As {@link #fresh()}, with kube-controller-manager running without the controllers named in
   * {@code stopped} (as {@code --controllers=...,-name} would): say, without {@code
   * garbage-collector-controller}, for a cluster whose garbage collection has stopped.
   */
  public static ControlPlane fresh(List<String> stopped) {
    return fresh(stopped, List.of());
  }

  /**
   * As {@link #fresh()}, with kube-apiserver compacting etcd's history every {@code interval}
   * instead of every five minutes ({@code --etcd-compaction-interval}): a continue token or a
   * resourceVersion older than about two intervals expires (410 Gone) within seconds, as one does
   * after minutes in a cluster.
   */
  public static ControlPlane compactingEvery(Duration interval) {
    return fresh(List.of(), List.of("--etcd-compaction-interval=" + interval.toMillis() + "ms"));
  }

  private static ControlPlane fresh(List<String> stopped, List<String> apiServerFlags) {
    List<String> controllers = CONTROLLERS.stream().filter(c -> !stopped.contains(c)).toList();
    for (int attempt = 1; ; attempt++) {
      ControlPlane started =
          new ControlPlane(
              ControlPlaneBinaries.directory(), controllers, null, "127.0.0.1", apiServerFlags);
      try {
        started.start();
        return started;
      } catch (IllegalStateException e) {
        if (attempt >= 3 || !portTaken(e)) {
          throw e;
        }
        log.warn("a port of the control plane was taken before it bound it; starting again");
      }
    }
  }

  private static boolean portTaken(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().contains("address already in use")) {
        return true;
      }
    }
    return false;
  }

  /**
   * A control plane of the caller's own whose processes run inside the network namespace {@code
   * netns} (with {@code nsenter --net}: {@code ip netns exec} would also mount a fresh /sys and
   * hide the cgroup mounts kubelet needs), for a real node in that namespace: kube-apiserver
   * listens on all of the namespace's addresses and advertises {@code address}, and the components
   * reach it there. This JVM reaches every component at the same ports of its own 127.0.0.1 through
   * a {@link NamespaceBridge}; the API server's certificate is valid for {@code localhost}, not
   * 127.0.0.1, so {@link #apiServerUrl()} names {@code localhost}. Needs root.
   */
  public static ControlPlane inNetworkNamespace(String netns, String address) {
    ControlPlane started =
        new ControlPlane(
            ControlPlaneBinaries.directory(), REAL_NODE_CONTROLLERS, netns, address, List.of());
    started.start();
    return started;
  }

  ControlPlane(Path binaries) {
    this(binaries, CONTROLLERS);
  }

  private ControlPlane(Path binaries, List<String> controllers) {
    this(binaries, controllers, null, "127.0.0.1", List.of());
  }

  private ControlPlane(
      Path binaries,
      List<String> controllers,
      String netns,
      String address,
      List<String> extraApiServerFlags) {
    this.binaries = binaries;
    this.netns = netns;
    this.address = address;
    try {
      this.workDir = Files.createTempDirectory("kipam-control-plane-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a work directory for the control plane", e);
    }
    this.files = new ControlPlaneFiles(workDir);
    this.etcdClientPort = freePort();
    int etcdPeerPort = freePort();
    this.apiServerPort = freePort();
    this.controllerManagerPort = freePort();
    this.schedulerPort = freePort();

    String etcdUrl = "http://127.0.0.1:" + etcdClientPort;
    String peerUrl = "http://127.0.0.1:" + etcdPeerPort;
    this.etcd =
        process(
            "etcd",
            List.of(
                "--name=kipam-test",
                "--data-dir=" + workDir.resolve("etcd"),
                "--listen-client-urls=" + etcdUrl,
                "--advertise-client-urls=" + etcdUrl,
                "--listen-peer-urls=" + peerUrl,
                "--initial-advertise-peer-urls=" + peerUrl,
                "--initial-cluster=kipam-test=" + peerUrl,
                // Test data is thrown away with the work directory; fsync only costs time.
                "--unsafe-no-fsync=true",
                "--log-level=warn"));
    List<String> apiServerFlags =
        new ArrayList<>(
            List.of(
                "--etcd-servers=" + etcdUrl,
                "--bind-address=" + (netns == null ? "127.0.0.1" : "0.0.0.0"),
                "--advertise-address=" + address,
                "--secure-port=" + apiServerPort,
                "--cert-dir=" + files.pkiDir(),
                "--token-auth-file=" + files.tokenFile(),
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + files.serviceAccountPublicKey(),
                "--service-account-signing-key-file=" + files.serviceAccountKey(),
                "--service-cluster-ip-range=10.96.0.0/16",
                // The advertise address is loopback, which the endpoint reconciler refuses to
                // publish for the kubernetes Service; nothing here reaches the API through it.
                "--endpoint-reconciler-type=none",
                "--profiling=false"));
    if (netns != null) {
      // A real node's kubelet: reached at its InternalIP (its name resolves nowhere), with a
      // client certificate kubelet trusts, so that kubectl exec and logs work.
      apiServerFlags.addAll(
          List.of(
              "--kubelet-preferred-address-types=InternalIP",
              "--kubelet-client-certificate=" + files.kubeletClientCert(),
              "--kubelet-client-key=" + files.kubeletClientKey()));
    }
    apiServerFlags.addAll(extraApiServerFlags);
    this.apiServer = process("kube-apiserver", apiServerFlags);
    String server = apiServerUrl();
    this.controllerManager =
        component(
            "kube-controller-manager",
            ControlPlaneFiles.CONTROLLER_MANAGER_USER,
            controllerManagerPort,
            List.of(
                "--controllers=" + String.join(",", controllers),
                "--service-account-private-key-file=" + files.serviceAccountKey(),
                "--root-ca-file=" + files.apiServerCertificate(),
                "--use-service-account-credentials=false"));
    this.scheduler =
        component("kube-scheduler", ControlPlaneFiles.SCHEDULER_USER, schedulerPort, List.of());
    this.bridgeFarSide =
        netns == null
            ? null
            : inNamespace(
                "namespace-bridge",
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    codeSource(),
                    NamespaceBridge.class.getName(),
                    workDir.toString(),
                    String.valueOf(etcdClientPort),
                    String.valueOf(apiServerPort),
                    String.valueOf(controllerManagerPort),
                    String.valueOf(schedulerPort)));
    log.debug("control plane work directory {}, API server {}", workDir, server);
  }

  /**
   * A controller-manager or scheduler: as {@code user}, its secure port {@code port} on loopback,
   * no leader election and no profiling, with {@code flags} of its own.
   */
  private ManagedProcess component(String binary, String user, int port, List<String> flags) {
    List<String> args = new ArrayList<>();
    args.add("--kubeconfig=" + files.kubeconfig(user));
    args.add("--bind-address=127.0.0.1");
    args.add("--secure-port=" + port);
    args.add("--leader-elect=false");
    args.addAll(flags);
    args.add("--profiling=false");
    return process(binary, args);
  }

  private ManagedProcess process(String binary, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(binaries.resolve(binary).toString());
    command.addAll(args);
    return inNamespace(binary, command);
  }

  private ManagedProcess inNamespace(String name, List<String> command) {
    List<String> full = new ArrayList<>();
    if (netns != null) {
      full.addAll(List.of("nsenter", "--net=/run/netns/" + netns));
    }
    full.addAll(command);
    return new ManagedProcess(name, full, workDir.resolve("logs").resolve(name + ".log"));
  }

  private static String codeSource() {
    try {
      return Path.of(
              NamespaceBridge.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException("cannot locate the classes of " + NamespaceBridge.class, e);
    }
  }

  /** The API server's URL for processes inside the control plane's network namespace. */
  public String apiServerUrlInNamespace() {
    return "https://" + (netns == null ? "127.0.0.1" : address) + ":" + apiServerPort;
  }

  void start() {
    long begin = System.nanoTime();
    files.writeKeysAndTokens();
    if (netns != null) {
      files.writeKubeletClientCertificates();
    }
    files.writeKubeconfig(ControlPlaneFiles.ADMIN_USER, files.adminToken, apiServerUrl());
    files.writeKubeconfig(
        ControlPlaneFiles.CONTROLLER_MANAGER_USER,
        files.controllerManagerToken,
        apiServerUrlInNamespace());
    files.writeKubeconfig(
        ControlPlaneFiles.SCHEDULER_USER, files.schedulerToken, apiServerUrlInNamespace());
    try {
      if (bridgeFarSide != null) {
        bridgeFarSide.start();
        bridge =
            NamespaceBridge.near(
                workDir,
                List.of(etcdClientPort, apiServerPort, controllerManagerPort, schedulerPort));
      }
      etcd.start();
      Probe.awaitOk(
          etcd, URI.create("http://127.0.0.1:" + etcdClientPort + "/health"), null, START_TIMEOUT);
      startApiServer();
      controllerManager.start();
      scheduler.start();
      Probe.awaitOk(
          controllerManager,
          URI.create("https://127.0.0.1:" + controllerManagerPort + "/healthz"),
          null,
          START_TIMEOUT);
      Probe.awaitOk(
          scheduler,
          URI.create("https://127.0.0.1:" + schedulerPort + "/healthz"),
          null,
          START_TIMEOUT);
      // The service-account controller creating "default" shows the controllers really run.
      Probe.awaitTrue(
          controllerManager,
          "create the default service account",
          START_TIMEOUT,
          () ->
              client().serviceAccounts().inNamespace("default").withName("default").get() != null);
    } catch (RuntimeException e) {
      Path kept = saveLogs("start-up-failure");
      close();
      throw new IllegalStateException(
          "the test control plane did not start; component logs kept in " + kept, e);
    }
    log.info(
        "control plane up in {} ms: API server {}, binaries {}",
        (System.nanoTime() - begin) / 1_000_000,
        apiServerUrl(),
        binaries);
  }

  /** Starts kube-apiserver (again) on its port and waits until it is ready. */
  public void startApiServer() {
    apiServer.start();
    Probe.awaitOk(
        apiServer, URI.create(apiServerUrl() + "/readyz"), files.adminToken, START_TIMEOUT);
  }

  /**
   * Stops kube-apiserver, leaving etcd and the controllers running, so tests can see what kipam
   * does while the API is unreachable. {@link #startApiServer()} brings it back on the same port.
   *
   * <p>SIGTERM first: kube-apiserver stops taking new requests at once. Its graceful shutdown then
   * keeps the open watches for longer than a test should wait (more than 15 s measured, every
   * time), so after {@link #API_SERVER_GRACE} it is killed, as a crashed or evicted API server
   * would be; clients see the same outage either way, and every watch ends.
   */
  public void stopApiServer() {
    apiServer.stop(API_SERVER_GRACE);
  }

  /** The pids of the control plane's running processes by binary name, for CPU accounting. */
  public Map<String, Long> pids() {
    Map<String, Long> pids = new LinkedHashMap<>();
    for (ManagedProcess p : List.of(etcd, apiServer, controllerManager, scheduler)) {
      p.pid().ifPresent(pid -> pids.put(p.name(), pid));
    }
    return pids;
  }

  public String apiServerUrl() {
    return "https://" + (netns == null ? "127.0.0.1" : "localhost") + ":" + apiServerPort;
  }

  /**
   * A kubeconfig file for the cluster administrator for processes inside the control plane's
   * network namespace (a kubelet there, say).
   */
  public Path adminKubeconfigInNamespace() {
    return files.writeKubeconfig(
        workDir.resolve("kubeconfig-admin-in-namespace"),
        ControlPlaneFiles.ADMIN_USER,
        files.adminToken,
        apiServerUrlInNamespace());
  }

  /** The API server's port on 127.0.0.1, e.g. for a {@link FaultProxy} in front of it. */
  public int apiServerPort() {
    return apiServerPort;
  }

  /** A client configuration for the cluster administrator, independent of any ~/.kube/config. */
  public Config adminConfig() {
    return new ConfigBuilder(Config.empty())
        .withMasterUrl(apiServerUrl())
        .withCaCertFile(files.apiServerCertificate().toString())
        .withOauthToken(files.adminToken)
        .withNamespace("default")
        .build();
  }

  /** A shared administrator client; do not close it. */
  public synchronized KubernetesClient client() {
    if (client == null) {
      client = new KubernetesClientBuilder().withConfig(adminConfig()).build();
    }
    return client;
  }

  /** The CA a real node's kubelet trusts for the API server's client certificate. */
  public Path kubeletClientCa() {
    return files.kubeletClientCa();
  }

  /** A kubeconfig file for the cluster administrator, for kubectl and kipam's own processes. */
  public Path adminKubeconfig() {
    return files.kubeconfig(ControlPlaneFiles.ADMIN_USER);
  }

  /**
   * A kubeconfig file like {@link #adminKubeconfig()} but for the server at {@code
   * https://127.0.0.1:<port>}, typically a {@link FaultProxy} in front of the API server: a process
   * started with it reaches the API through the proxy, while {@link #client()} still talks to the
   * API directly. The API server's certificate is valid for 127.0.0.1, so TLS works through a proxy
   * that passes the bytes on.
   */
  public Path kubeconfigVia(int port) {
    String server = "https://127.0.0.1:" + port;
    return files.writeKubeconfig(
        workDir.resolve("kubeconfig-admin-via-" + port),
        ControlPlaneFiles.ADMIN_USER,
        files.adminToken,
        server);
  }

  /**
   * Runs kubectl as the cluster administrator and returns what it printed on stdout; a non-zero
   * exit fails with kubectl's stderr.
   */
  public String kubectl(String... args) {
    List<String> command = new ArrayList<>();
    command.add(binary("kubectl").toString());
    command.add("--kubeconfig=" + adminKubeconfig());
    command.addAll(List.of(args));
    try {
      Process kubectl = new ProcessBuilder(command).start();
      kubectl.getOutputStream().close();
      String out = new String(kubectl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      String err = new String(kubectl.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      if (kubectl.waitFor() != 0) {
        throw new IllegalStateException("kubectl " + String.join(" ", args) + " failed: " + err);
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kubectl", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running kubectl", e);
    }
  }

  /** A control-plane binary such as {@code kubectl}. */
  public Path binary(String name) {
    return binaries.resolve(name);
  }

  /**
   * Copies every component's log into {@code target/control-plane-logs/<label>} (or the directory
   * the {@code kipam.controlPlaneLogs} system property names) and returns that directory.
   */
  public Path saveLogs(String label) {
    Path target =
        Path.of(System.getProperty("kipam.controlPlaneLogs", "target/control-plane-logs"))
            .resolve(label.replaceAll("[^A-Za-z0-9._-]", "_"))
            .toAbsolutePath();
    try {
      Files.createDirectories(target);
      for (ManagedProcess p : List.of(etcd, apiServer, controllerManager, scheduler)) {
        if (Files.exists(p.logFile())) {
          Files.copy(
              p.logFile(),
              target.resolve(p.logFile().getFileName()),
              StandardCopyOption.REPLACE_EXISTING);
        }
      }
    } catch (IOException e) {
      log.warn("could not keep the control-plane logs in {}: {}", target, e.toString());
    }
    return target;
  }

  @Override
  public synchronized void close() {
    if (client != null) {
      client.close();
      client = null;
    }
    scheduler.stop();
    controllerManager.stop();
    apiServer.stop(API_SERVER_GRACE);
    etcd.stop();
    if (bridge != null) {
      bridge.close();
    }
    if (bridgeFarSide != null) {
      bridgeFarSide.stop();
    }
    deleteRecursively(workDir);
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      log.warn("could not remove {}: {}", dir, e.toString());
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free loopback port", e);
    }
  }
}
