package io.kipam.system.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * The kipam processes one test starts, both halves as in a cluster: kipam-operator processes and
 * registered nodes with their kipam-node ({@link NodeRig}), logging into one temporary directory,
 * their pods spread over namespaces of the test's own (three unless told otherwise). {@link #close}
 * stops them all, in the order they were started.
 *
 * <p>A test class gets them from its {@link SystemTest} ({@code private final KipamProcesses
 * processes = SYSTEM.processesOfEachTest("demand")}), which opens them before each test (the test's
 * namespaces and directory) and closes them after it; a benchmark or a test that needs them for a
 * part of its run makes its own with the constructor and closes them.
 */
public final class KipamProcesses implements AutoCloseable {

  public Path dir;
  public List<String> namespaces;
  private ControlPlane controlPlane;
  private KubernetesClient client;
  private final String name;
  private final int namespaceCount;
  private final List<AutoCloseable> started = new ArrayList<>();
  private boolean ownsControlPlane;

  /** {@code name} names the directory and prefixes the namespaces. */
  public KipamProcesses(ControlPlane controlPlane, KubernetesClient client, String name)
      throws IOException {
    this(controlPlane, client, name, 3);
  }

  /** As above, with the pods spread over {@code namespaceCount} namespaces. */
  public KipamProcesses(
      ControlPlane controlPlane, KubernetesClient client, String name, int namespaceCount)
      throws IOException {
    this(name, namespaceCount);
    open(controlPlane, client);
  }

  private KipamProcesses(String name, int namespaceCount) {
    this.name = name;
    this.namespaceCount = namespaceCount;
  }

  /**
   * Processes on a control plane of their own ({@link ControlPlane#fresh}) with kipam's CRDs
   * installed, for a benchmark that must not share the JVM's; {@link #close} stops the control
   * plane after the processes.
   */
  public static KipamProcesses onFreshControlPlane(String name) throws Exception {
    ControlPlane fresh = ControlPlane.fresh();
    try {
      io.kipam.testing.KipamCrds.install(fresh.client());
      KipamProcesses processes = new KipamProcesses(fresh, fresh.client(), name);
      processes.ownsControlPlane = true;
      return processes;
    } catch (Exception | Error e) {
      fresh.close();
      throw e;
    }
  }

  /** The control plane the processes run against. */
  public ControlPlane controlPlane() {
    return controlPlane;
  }

  /** The admin's client of {@link #controlPlane}. */
  public KubernetesClient client() {
    return client;
  }

  /** Processes to be opened later ({@link SystemTest#processesOfEachTest}). */
  static KipamProcesses unopened(String name) {
    return new KipamProcesses(name, 3);
  }

  void open(ControlPlane controlPlane, KubernetesClient client) throws IOException {
    this.controlPlane = controlPlane;
    this.client = client;
    this.dir = Files.createTempDirectory("kipam-" + name + "-it");
    this.namespaces = NodeRig.namespaces(client, name, namespaceCount);
  }

  /** An operator process, not started yet (add settings with {@code withEnv}, holds, ...). */
  public OperatorProcess operator() {
    OperatorProcess operator = new OperatorProcess(dir, controlPlane.adminKubeconfig(), client);
    started.add(operator);
    return operator;
  }

  /** An operator process started with {@code env} added, once it leads. */
  public OperatorProcess leadingOperator(Map<String, String> env, Duration within) {
    return operator().startLeading(env, within);
  }

  /** A registered node whose kipam-node runs with {@code env}, ready ({@code pool} is Ready). */
  public NodeRig node(String pool, Map<String, String> env) throws Exception {
    return nodeWith(pool, env, daemon -> {});
  }

  /**
   * As {@link #node(String, Map)}, the daemon given {@code setup} before it starts (JVM options,
   * class data sharing).
   */
  public NodeRig nodeWith(String pool, Map<String, String> env, Consumer<DaemonProcess> setup)
      throws Exception {
    NodeRig rig =
        NodeRig.launch(
            client, dir, namespaces, pool, env, node -> controlPlane.adminKubeconfig(), setup);
    started.add(rig);
    rig.awaitReady();
    return rig;
  }

  /**
   * {@code count} registered nodes, node {@code n}'s kipam-node running with {@code env.apply(n)},
   * all ready ({@code pool} is Ready). Their daemons start at once, not one after the other.
   */
  public List<NodeRig> nodes(String pool, int count, IntFunction<Map<String, String>> env)
      throws Exception {
    List<NodeRig> rigs = new ArrayList<>();
    for (int n = 0; n < count; n++) {
      NodeRig rig =
          NodeRig.launch(
              client, dir, namespaces, pool, env.apply(n), node -> controlPlane.adminKubeconfig());
      started.add(rig);
      rigs.add(rig);
    }
    for (NodeRig rig : rigs) {
      rig.awaitReady();
    }
    return rigs;
  }

  /** {@code count} nodes whose kipam-node all run with {@code env}, as above. */
  public List<NodeRig> nodes(String pool, int count, Map<String, String> env) throws Exception {
    return nodes(pool, count, n -> env);
  }

  /**
   * A registered node whose kipam-node runs with {@code env} and the credentials of {@code
   * kubeconfig} (given the node's name), ready ({@code pool} is Ready).
   */
  public NodeRig node(String pool, Map<String, String> env, Function<String, Path> kubeconfig)
      throws Exception {
    NodeRig rig = NodeRig.start(client, dir, namespaces, pool, env, kubeconfig);
    started.add(rig);
    return rig;
  }

  @Override
  public void close() throws Exception {
    try {
      for (AutoCloseable c : started) {
        c.close();
      }
      started.clear();
    } finally {
      if (ownsControlPlane) {
        controlPlane.close();
      }
    }
  }
}
