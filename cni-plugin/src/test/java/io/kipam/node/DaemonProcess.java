package io.kipam.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A kipam-node running as its own JVM, as on a node, so tests can SIGKILL it and start it again.
 * Its output goes to a log file that failed tests point at.
 */
final class DaemonProcess implements AutoCloseable {

  final String node;
  final Path socket;
  final Path stateDir;
  final Path log;
  private final Path kubeconfig;
  private final java.util.Map<String, String> env = new java.util.HashMap<>();
  private Process process;

  DaemonProcess(Path dir, String node, Path kubeconfig) {
    this(dir, node, kubeconfig, node + ".log");
  }

  /** Another process for the same node (same socket and state), logging to its own file. */
  DaemonProcess(Path dir, String node, Path kubeconfig, String logName) {
    this.node = node;
    this.socket = dir.resolve(node).resolve("kipam.sock");
    this.stateDir = dir.resolve(node).resolve("state");
    this.log = dir.resolve(logName);
    this.kubeconfig = kubeconfig;
  }

  /** Sets a variable of the daemon's environment for its next start. */
  DaemonProcess withEnv(String name, String value) {
    env.put(name, value);
    return this;
  }

  DaemonProcess start() {
    Path target = Path.of("target");
    try {
      String deps = Files.readString(target.resolve("daemon.classpath")).trim();
      String jar;
      try (var files = Files.list(target)) {
        jar =
            files
                .map(Path::toString)
                .filter(f -> f.matches(".*/kipam-cni-plugin-[^/]*\\d(-SNAPSHOT)?\\.jar"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("package the module first"));
      }
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx256m");
      command.add("-cp");
      command.add(jar + ":" + deps);
      command.add("io.kipam.node.NodeDaemon");
      ProcessBuilder builder = new ProcessBuilder(command);
      builder.environment().put("NODE_NAME", node);
      builder.environment().put("KIPAM_SOCKET", socket.toString());
      builder.environment().put("KIPAM_STATE_DIR", stateDir.toString());
      builder.environment().put("KUBECONFIG", kubeconfig.toString());
      builder.environment().put("KIPAM_GC_GRACE_SECONDS", "2");
      builder.environment().put("KIPAM_SETTLE_SECONDS", "5");
      builder.environment().putAll(env);
      process =
          builder
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until STATUS through {@code kipam} succeeds: the daemon serves and has synced. */
  void awaitReady(Path kipam, String pool) {
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

  boolean alive() {
    return process != null && process.isAlive();
  }

  /** SIGKILL: no shutdown hook runs, exactly like a node losing the process. */
  void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
