package io.kipam.system.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A kipam-node running as its own JVM, as on a node, so tests can SIGKILL it and start it again.
 * Its output goes to a log file that failed tests point at.
 */
public final class DaemonProcess extends JvmProcess<DaemonProcess> {

  public final String node;
  public final Path socket;
  public final Path stateDir;
  private final Path kubeconfig;

  public DaemonProcess(Path dir, String node, Path kubeconfig) {
    this(dir, node, kubeconfig, node + ".log");
  }

  /** Another process for the same node (same socket and state), logging to its own file. */
  public DaemonProcess(Path dir, String node, Path kubeconfig, String logName) {
    super(dir.resolve(logName));
    this.node = node;
    this.socket = dir.resolve(node).resolve("kipam.sock");
    this.stateDir = dir.resolve(node).resolve("state");
    this.kubeconfig = kubeconfig;
  }

  /** cni-plugin's jar and its {@code target/daemon.classpath}, as the image ships them. */
  @Override
  public String classpath() throws IOException {
    Path target = CniPluginBuild.target();
    String deps = Files.readString(target.resolve("daemon.classpath")).trim();
    try (var files = Files.list(target)) {
      String jar =
          files
              .map(Path::toString)
              .filter(f -> f.matches(".*/kipam-cni-plugin-[^/]*\\d(-SNAPSHOT)?\\.jar"))
              .findFirst()
              .orElseThrow(() -> new IllegalStateException("package the cni-plugin module first"));
      return jar + ":" + deps;
    }
  }

  /**
   * The kipam-node image's JVM options, from the same property its entrypoint is made of ({@code
   * kipam.node.jvmOptions} in the root pom, written to cni-plugin's {@code
   * target/daemon.jvm-options}; its malloc arenas likewise, in {@link #environment}): the client
   * compiler only, the serial collector, and the heap, metaspace, stacks and code cache sized for
   * what the daemon holds (docs/benchmarks.md).
   */
  @Override
  public List<String> jvmOptions() {
    return List.of(built("daemon.jvm-options").split(","));
  }

  /** A setting of the image that cni-plugin's build wrote into its target directory. */
  private static String built(String file) {
    try {
      return Files.readString(CniPluginBuild.target().resolve(file)).trim();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("package the cni-plugin module first", e);
    }
  }

  @Override
  public String mainClass() {
    return "io.kipam.node.NodeDaemon";
  }

  @Override
  public Map<String, String> environment() {
    return Map.of(
        "NODE_NAME",
        node,
        "KIPAM_SOCKET",
        socket.toString(),
        "KIPAM_STATE_DIR",
        stateDir.toString(),
        "KUBECONFIG",
        kubeconfig.toString(),
        "KIPAM_GC_GRACE_SECONDS",
        "2",
        "KIPAM_SETTLE_SECONDS",
        "5",
        "MALLOC_ARENA_MAX",
        built("daemon.malloc-arena-max"));
  }

  /** kipam-node's settings at its next start, its defaults where nothing sets them. */
  public io.kipam.node.NodeSettings settings() {
    return io.kipam.node.NodeSettings.fromEnvironment(settingsEnvironment());
  }

  /** Waits until STATUS through {@code kipam} succeeds: the daemon serves and has synced. */
  public void awaitReady(Path kipam, String pool) {
    String config = Cluster.config("1.1.0", socket.toString(), pool);
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(120))
        .untilAsserted(
            () ->
                org.assertj.core.api.Assertions.assertThat(
                        CniCall.run(kipam, java.util.Map.of("CNI_COMMAND", "STATUS"), config).ok())
                    .as("kipam-node of %s ready; its log: %s", node, log)
                    .isTrue());
  }

  /**
   * This process's lock of the node lock file as the kernel reports it ({@code /proc/locks}):
   * {@code HELD}, {@code WAITING} (blocked behind another process's lock) or {@code NONE}. Read
   * from the kernel, not the daemon's log.
   */
  public NodeLockState nodeLock() throws IOException {
    Path file = stateDir.resolve("kipam-node.lock");
    if (!alive() || !Files.exists(file)) {
      return NodeLockState.NONE;
    }
    String inode = ":" + Files.getAttribute(file, "unix:ino") + " ";
    String pid = " " + pid() + " ";
    for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
      if (line.contains(inode) && line.contains(pid)) {
        return line.contains("->") ? NodeLockState.WAITING : NodeLockState.HELD;
      }
    }
    return NodeLockState.NONE;
  }

  /** See {@link #nodeLock}. */
  public enum NodeLockState {
    HELD,
    WAITING,
    NONE
  }
}
