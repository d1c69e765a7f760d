package io.kipam.testing;

import static io.fabric8.kubernetes.api.model.DeletionPropagation.ORPHAN;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Kubernetes node for tests: kubelet, containerd and runc, with etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler, all inside one network namespace this fixture
 * creates, whose only address ({@link #ADDRESS}, on its {@code lo}) is the node's IP. Pods run for
 * real.
 *
 * <p>containerd has a private config, root, state and socket and the CNI bin and conf directories
 * of this node ({@link #cniBinDir()} holds loopback, bridge and host-local; {@link #cniConfDir()}
 * starts empty, so pods wait until a test writes a network config). No registry is reachable: the
 * sandbox image {@code kipam.io/pause:1} and {@code kipam.io/workload:1} are imported from tarballs
 * {@code hack/node-images/build.sh} writes; {@link #importImage(Path)} imports more. Needs root;
 * installs containerd and runc with apt-get when they are missing. One real node runs on a machine
 * at a time: {@link #start()} waits for the one before to close (a file lock), since kubelet and
 * containerd share the fixed host paths. {@link #close()} stops everything and removes what kubelet
 * and containerd leave at those paths.
 */
public final class RealNode implements AutoCloseable {

  private final AtomicBoolean closed = new AtomicBoolean();

  private static final Logger log = LoggerFactory.getLogger(RealNode.class);

  /** The node's IP: the one address of its network namespace. */
  public static final String ADDRESS = "10.255.0.1";

  /** The name the Node registers under. */
  public static final String NODE_NAME = "kipam-real-node";

  /** Host paths kubelet and containerd write no matter how they are configured. */
  static final List<Path> FIXED_HOST_PATHS =
      List.of(
          Path.of("/var/lib/kubelet"),
          Path.of("/var/log/containers"),
          Path.of("/var/log/pods"),
          Path.of("/var/lib/cni"),
          Path.of("/run/containerd"));

  private static final Duration READY_TIMEOUT = Duration.ofMinutes(2);

  private final String netns =
      "kipam-node-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 30), 36);
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Path workDir;
  private final List<Path> createdHostPaths = new ArrayList<>();
  private final List<String> netnsBefore;
  private Path images;
  private ControlPlane controlPlane;
  private ManagedProcess containerd;
  private ManagedProcess kubelet;

  private RealNode() {
    try {
      lockChannel = HostRuntime.lockChannel();
      if (HostRuntime.inUse()) {
        log.info("waiting for the real node of another run to stop ({})", HostRuntime.LOCK);
      }
      lock = lockChannel.lock();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot lock " + HostRuntime.LOCK, e);
    }
    try {
      workDir = Files.createTempDirectory("kipam-real-node-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a work directory for the real node", e);
    }
    netnsBefore = namedNetworkNamespaces();
    for (Path p : FIXED_HOST_PATHS) {
      if (!Files.exists(p)) {
        createdHostPaths.add(p);
      }
    }
  }

  /**
   * Starts the node and waits until its Node is registered; fails with the reason when it cannot.
   * The Node becomes Ready once a network config is in place, see {@link #awaitReady()}.
   */
  public static RealNode start() {
    return start(node -> {});
  }

  /**
   * As {@link #start()}, handing the node to {@code created} before it is brought up, so that a
   * caller's shutdown hook (Ctrl-C) can stop a node that is still starting.
   */
  public static RealNode start(Consumer<RealNode> created) {
    HostRuntime.require();
    RealNode node = new RealNode();
    created.accept(node);
    try {
      node.bringUp();
      return node;
    } catch (RuntimeException | Error e) {
      node.close();
      throw e;
    }
  }

  private void bringUp() {
    long begin = System.nanoTime();
    Path binaries = ControlPlaneBinaries.directory();
    Path cniTools = ControlPlaneBinaries.buildOutput("hack/cni-tools/build.sh", "cni-tools");
    images = ControlPlaneBinaries.buildOutput("hack/node-images/build.sh", "node-images");
    run("ip", "netns", "add", netns);
    run("ip", "-n", netns, "link", "set", "lo", "up");
    run("ip", "-n", netns, "address", "add", ADDRESS + "/32", "dev", "lo");
    controlPlane = ControlPlane.inNetworkNamespace(netns, ADDRESS);
    long controlPlaneUp = System.nanoTime();

    try {
      Files.createDirectories(cniBinDir());
      Files.createDirectories(cniConfDir());
      Files.createDirectories(staticPodDir());
      for (String plugin : List.of("loopback", "bridge", "host-local", "macvlan")) {
        Files.copy(cniTools.resolve(plugin), cniBinDir().resolve(plugin));
        cniBinDir().resolve(plugin).toFile().setExecutable(true);
      }
      Files.writeString(workDir.resolve("containerd.toml"), containerdConfig());
      Files.writeString(workDir.resolve("kubelet.yaml"), kubeletConfig());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the node's configuration in " + workDir, e);
    }
    containerd =
        inNamespace(
            "containerd",
            List.of("containerd", "--config", workDir.resolve("containerd.toml").toString()));
    containerd.start();
    Probe.awaitTrue(
        containerd,
        "serve its socket",
        READY_TIMEOUT,
        () -> Files.exists(containerdSocket()) && ctrQuietly("version") == 0);
    importImage(images.resolve("pause.tar"));
    importImage(images.resolve("workload.tar"));

    long kubeletStart = System.nanoTime();
    kubelet =
        inNamespace(
            "kubelet",
            List.of(
                controlPlane.binary("kubelet").toString(),
                "--config=" + workDir.resolve("kubelet.yaml"),
                "--kubeconfig=" + controlPlane.adminKubeconfigInNamespace(),
                "--root-dir=" + workDir.resolve("kubelet"),
                "--node-ip=" + ADDRESS,
                "--hostname-override=" + NODE_NAME,
                "--v=1"));
    kubelet.start();
    Probe.awaitTrue(
        kubelet,
        "register its Node",
        READY_TIMEOUT,
        () -> client().nodes().withName(NODE_NAME).get() != null);
    log.info(
        "real node {} registered {} s after kubelet started ({} s in all, control plane {} s)",
        NODE_NAME,
        seconds(System.nanoTime() - kubeletStart),
        seconds(System.nanoTime() - begin),
        seconds(controlPlaneUp - begin));
  }

  /**
   * Waits until the Node is Ready. kubelet reports it Ready only once the container runtime has a
   * network config, so call this after writing one into {@link #cniConfDir()} (or after installing
   * a network plugin that writes it).
   */
  public void awaitReady() {
    long begin = System.nanoTime();
    Probe.awaitTrue(kubelet, "report its Node Ready", READY_TIMEOUT, this::nodeReady);
    log.info("real node {} Ready after {} s", NODE_NAME, seconds(System.nanoTime() - begin));
  }

  /**
   * Makes Multus's thin plugin the node's CNI, as a cluster's Multus installation does: the plugin
   * (built by {@code hack/multus/build.sh}) in {@link #cniBinDir()}, the
   * NetworkAttachmentDefinition CRD applied, and {@code 00-multus.conf} first in {@link
   * #cniConfDir()}, delegating every pod's {@code eth0} to the cluster network named {@code
   * clusterNetwork} (a configuration of the same directory, written by the caller) and its other
   * interfaces to the NetworkAttachmentDefinitions its {@code k8s.v1.cni.cncf.io/networks} names.
   * Multus reads pods and definitions, and writes {@code k8s.v1.cni.cncf.io/network-status}, with
   * the administrator's kubeconfig; its log is {@code logs/multus.log} of the node's work
   * directory.
   *
   * <p>The cluster network is named, not given as a file: Multus v4.2.3 writes a conflist given by
   * path into its cache without a {@code cniVersion} and, at the pod's DEL, rebuilds it from its
   * own types, which drops every plugin setting but {@code type} (the DEL then reaches the IPAM
   * without its pools).
   */
  public void installMultus(String clusterNetwork) {
    Path multus = ControlPlaneBinaries.buildOutput("hack/multus/build.sh", "multus");
    try {
      Files.copy(multus.resolve("multus"), cniBinDir().resolve("multus"));
      cniBinDir().resolve("multus").toFile().setExecutable(true);
      Files.createDirectories(workDir.resolve("logs"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot put Multus into " + cniBinDir(), e);
    }
    controlPlane.kubectl("apply", "--server-side", "-f", multus.resolve("nad-crd.yaml").toString());
    writeNetworkConfig(
        "00-multus.conf",
        """
        {
          "cniVersion": "1.0.0",
          "name": "multus-cni-network",
          "type": "multus",
          "kubeconfig": "%s",
          "clusterNetwork": "%s",
          "binDir": "%s",
          "confDir": "%s",
          "cniDir": "%s",
          "logFile": "%s",
          "logLevel": "verbose"
        }
        """
            .formatted(
                controlPlane.adminKubeconfigInNamespace(),
                clusterNetwork,
                cniBinDir(),
                cniConfDir(),
                workDir.resolve("cni/multus"),
                workDir.resolve("logs/multus.log")));
  }

  /**
   * Gives the node a second network interface {@code name}, up, with no address, as a machine's
   * second NIC that a macvlan network of Multus uses as its {@code master}: one end of a veth pair
   * whose other end ({@code name-peer}) stays in the node's namespace too (a dummy link would need
   * a kernel module that a container host may not load).
   */
  public void addHostInterface(String name) {
    run("ip", "-n", netns, "link", "add", name, "type", "veth", "peer", "name", name + "-peer");
    run("ip", "-n", netns, "link", "set", name, "up");
    run("ip", "-n", netns, "link", "set", name + "-peer", "up");
  }

  /**
   * What {@code ip -o address show} prints inside the network namespace of {@code pod}'s sandbox,
   * entered through the process of its first container.
   */
  public String addressesInPod(Pod pod) {
    String containerId =
        pod.getStatus().getContainerStatuses().get(0).getContainerID().replace("containerd://", "");
    String pid =
        output(ctrCommand("-n", "k8s.io", "tasks", "ls").toArray(String[]::new))
            .lines()
            .map(l -> l.trim().split("\\s+"))
            .filter(fields -> fields[0].equals(containerId))
            .map(fields -> fields[1])
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "no running task of container " + containerId + " of " + podName(pod)));
    return output("nsenter", "--net=/proc/" + pid + "/ns/net", "ip", "-o", "address", "show");
  }

  private static String podName(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /** Writes a CNI network configuration list into {@link #cniConfDir()} as {@code file}. */
  public void writeNetworkConfig(String file, String conflist) {
    try {
      Files.writeString(cniConfDir().resolve(file), conflist);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + " into " + cniConfDir(), e);
    }
  }

  private boolean nodeReady() {
    Node node = client().nodes().withName(NODE_NAME).get();
    return node != null
        && node.getStatus() != null
        && node.getStatus().getConditions() != null
        && node.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** Imports a docker-archive or OCI image tarball into containerd's {@code k8s.io} namespace. */
  public void importImage(Path tarball) {
    List<String> command = ctrCommand("-n", "k8s.io", "images", "import", tarball.toString());
    run(command.toArray(String[]::new));
  }

  /**
   * Tags the image {@code source} of the node's containerd as {@code target} too, so that a pod
   * naming {@code target} runs without a registry (no registry is reachable from the node).
   */
  public void tagImage(String source, String target) {
    run(ctrCommand("-n", "k8s.io", "images", "tag", source, target).toArray(String[]::new));
  }

  public ControlPlane controlPlane() {
    return controlPlane;
  }

  /** An administrator client, through the control plane's bridge into the namespace. */
  public KubernetesClient client() {
    return controlPlane.client();
  }

  /** A kubeconfig for kubectl and processes run on this host (outside the namespace). */
  public Path kubeconfig() {
    return controlPlane.adminKubeconfig();
  }

  /** The network namespace everything runs in. */
  public String networkNamespace() {
    return netns;
  }

  public Path cniBinDir() {
    return workDir.resolve("cni/bin");
  }

  public Path cniConfDir() {
    return workDir.resolve("cni/net.d");
  }

  public Path staticPodDir() {
    return workDir.resolve("kubelet-manifests");
  }

  /** Where host-local (and tests) may keep IPAM state of this node. */
  public Path cniDataDir() {
    return workDir.resolve("cni/data");
  }

  /** Where the sandbox and workload image tarballs are. */
  public Path imagesDir() {
    return images;
  }

  /** containerd's socket, for {@code ctr --address} or {@code CONTAINERD_ADDRESS}. */
  public Path containerdSocket() {
    return workDir.resolve("containerd/containerd.sock");
  }

  private String containerdConfig() {
    Path dir = workDir.resolve("containerd");
    return String.join(
        "\n",
        "version = 2",
        "root = \"" + dir.resolve("root") + "\"",
        "state = \"" + dir.resolve("state") + "\"",
        "[grpc]",
        "  address = \"" + containerdSocket() + "\"",
        "[ttrpc]",
        "  address = \"" + dir.resolve("containerd.sock.ttrpc") + "\"",
        "[plugins.\"io.containerd.grpc.v1.cri\"]",
        "  sandbox_image = \"kipam.io/pause:1\"",
        // Without CAP_SYS_RESOURCE runc cannot lower oom_score_adj, and every sandbox fails with
        // "can't get final child's PID from pipe: EOF" unless containerd keeps it as it is.
        "  restrict_oom_score_adj = true",
        "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]",
        "    snapshotter = \"overlayfs\"",
        "    default_runtime_name = \"runc\"",
        "    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]",
        "      runtime_type = \"io.containerd.runc.v2\"",
        "      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]",
        "        SystemdCgroup = false",
        "  [plugins.\"io.containerd.grpc.v1.cri\".cni]",
        "    bin_dir = \"" + cniBinDir() + "\"",
        "    conf_dir = \"" + cniConfDir() + "\"",
        "");
  }

  private String kubeletConfig() {
    return String.join(
        "\n",
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "kind: KubeletConfiguration",
        "failCgroupV1: false",
        "cgroupDriver: cgroupfs",
        "failSwapOn: false",
        "containerRuntimeEndpoint: unix://" + containerdSocket(),
        "staticPodPath: " + staticPodDir(),
        "podLogsDir: " + workDir.resolve("pod-logs"),
        "address: " + ADDRESS,
        "readOnlyPort: 0",
        "healthzBindAddress: 127.0.0.1",
        "authentication:",
        "  anonymous:",
        "    enabled: false",
        "  webhook:",
        "    enabled: false",
        "  x509:",
        "    clientCAFile: " + controlPlane.kubeletClientCa(),
        "authorization:",
        "  mode: AlwaysAllow",
        "resolvConf: \"\"",
        // A test machine's disk is shared; evicting pods for it would fail tests for no reason.
        "evictionHard:",
        "  nodefs.available: \"0%\"",
        "  imagefs.available: \"0%\"",
        "imageGCHighThresholdPercent: 100",
        "");
  }

  private ManagedProcess inNamespace(String name, List<String> command) {
    List<String> full = new ArrayList<>(List.of("nsenter", "--net=/run/netns/" + netns));
    full.addAll(command);
    return new ManagedProcess(name, full, workDir.resolve("logs").resolve(name + ".log"));
  }

  private List<String> ctrCommand(String... args) {
    List<String> command =
        new ArrayList<>(List.of("ctr", "--address", containerdSocket().toString()));
    command.addAll(List.of(args));
    return command;
  }

  private int ctrQuietly(String... args) {
    try {
      Process p =
          new ProcessBuilder(ctrCommand(args))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return p.waitFor(10, TimeUnit.SECONDS) ? p.exitValue() : -1;
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /**
   * Stops kubelet after its pods (so their sandboxes and network namespaces go through CNI DEL),
   * then containerd and what it started, then the control plane; removes the network namespace, the
   * fixed host paths this node created, and the work directory.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return; // a shutdown hook and a failed start may both close it
    }
    long begin = System.nanoTime();
    if (kubelet != null && kubelet.isAlive()) {
      try {
        // Their controllers would make new pods for the ones deleted here; their pods stay and
        // are deleted with the rest.
        client().apps().deployments().inAnyNamespace().withPropagationPolicy(ORPHAN).delete();
        client().apps().replicaSets().inAnyNamespace().withPropagationPolicy(ORPHAN).delete();
        client().apps().daemonSets().inAnyNamespace().withPropagationPolicy(ORPHAN).delete();
        client().pods().inAnyNamespace().withGracePeriod(0).delete();
        Probe.awaitTrue(
            kubelet,
            "stop every pod",
            Duration.ofSeconds(60),
            () -> ctrQuietly("-n", "k8s.io", "tasks", "ls") == 0 && noTasks());
      } catch (RuntimeException e) {
        log.warn("pods of the real node did not all stop: {}", e.toString());
      }
    }
    if (kubelet != null) {
      kubelet.stop();
    }
    if (containerd != null) {
      containerd.stop();
    }
    killShims();
    if (controlPlane != null) {
      controlPlane.close();
    }
    unmountUnder(workDir);
    for (String ns : namedNetworkNamespaces()) {
      if (!netnsBefore.contains(ns) && (ns.equals(netns) || ns.startsWith("cni-"))) {
        runQuietly("ip", "netns", "delete", ns);
      }
    }
    runQuietly("ip", "netns", "delete", netns);
    for (Path p : createdHostPaths) {
      unmountUnder(p);
      deleteRecursively(p);
    }
    deleteRecursively(workDir);
    try {
      lock.release();
      lockChannel.close();
    } catch (IOException e) {
      log.warn("could not release {}: {}", HostRuntime.LOCK, e.toString());
    }
    log.info("real node torn down in {} s", seconds(System.nanoTime() - begin));
  }

  private boolean noTasks() {
    try {
      Process p = new ProcessBuilder(ctrCommand("-n", "k8s.io", "tasks", "ls", "-q")).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(10, TimeUnit.SECONDS);
      return out.isBlank();
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** containerd's shims outlive it; these are the ones of this node's containerd. */
  private void killShims() {
    String socket = containerdSocket().toString();
    ProcessHandle.allProcesses()
        .filter(
            p ->
                p.info()
                    .commandLine()
                    .map(c -> c.contains("containerd-shim") && c.contains(socket))
                    .orElse(false))
        .forEach(
            p -> {
              p.descendants().forEach(ProcessHandle::destroyForcibly);
              p.destroyForcibly();
            });
  }

  private static void unmountUnder(Path dir) {
    String prefix = dir.toAbsolutePath().toString();
    try {
      List<String> mounts =
          Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
              .map(l -> l.split(" ")[4])
              .filter(m -> m.equals(prefix) || m.startsWith(prefix + "/"))
              .sorted(Comparator.reverseOrder())
              .toList();
      for (String m : mounts) {
        runQuietly("umount", "-l", m);
      }
    } catch (IOException e) {
      log.warn("cannot read the mount table: {}", e.toString());
    }
  }

  private static List<String> namedNetworkNamespaces() {
    Path dir = Path.of("/run/netns");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> names = Files.list(dir)) {
      return names.map(p -> p.getFileName().toString()).toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  static void run(String... command) {
    output(command);
  }

  /** Runs {@code command}, returning what it printed; fails with that when it fails. */
  static String output(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (p.waitFor() != 0) {
        throw new IllegalStateException(String.join(" ", command) + " failed: " + out.strip());
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command[0], e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command[0], e);
    }
  }

  private static void runQuietly(String... command) {
    try {
      run(command);
    } catch (RuntimeException e) {
      log.debug("{}", e.getMessage());
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      log.warn("could not remove {}: {}", dir, e.toString());
    }
  }

  private static String seconds(long nanos) {
    return String.format("%.1f", nanos / 1e9);
  }
}
