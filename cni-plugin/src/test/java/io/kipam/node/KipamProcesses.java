package io.kipam.node;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The kipam processes one test starts, both halves as in a cluster: kipam-operator processes and
 * registered nodes with their kipam-node ({@link NodeRig}), logging into one temporary directory,
 * their pods spread over namespaces of the test's own (three unless told otherwise). {@link #close}
 * stops them all, in the order they were started.
 */
final class KipamProcesses implements AutoCloseable {

  final Path dir;
  final List<String> namespaces;
  private final ControlPlane controlPlane;
  private final KubernetesClient client;
  private final List<AutoCloseable> started = new ArrayList<>();

  /** {@code name} names the directory and prefixes the namespaces. */
  KipamProcesses(ControlPlane controlPlane, KubernetesClient client, String name)
      throws IOException {
    this(controlPlane, client, name, 3);
  }

  /** As above, with the pods spread over {@code namespaceCount} namespaces. */
  KipamProcesses(
      ControlPlane controlPlane, KubernetesClient client, String name, int namespaceCount)
      throws IOException {
    this.controlPlane = controlPlane;
    this.client = client;
    this.dir = Files.createTempDirectory("kipam-" + name + "-it");
    this.namespaces = NodeRig.namespaces(client, name, namespaceCount);
  }

  /** An operator process, not started yet (add settings with {@code withEnv}, holds, ...). */
  OperatorProcess operator() {
    OperatorProcess operator = new OperatorProcess(dir, controlPlane.adminKubeconfig(), client);
    started.add(operator);
    return operator;
  }

  /** An operator process started with {@code env} added, once it leads. */
  OperatorProcess leadingOperator(Map<String, String> env, Duration within) {
    return operator().startLeading(env, within);
  }

  /** A registered node whose kipam-node runs with {@code env}, ready ({@code pool} is Ready). */
  NodeRig node(String pool, Map<String, String> env) throws Exception {
    NodeRig rig = NodeRig.start(controlPlane, client, dir, namespaces, pool, env);
    started.add(rig);
    return rig;
  }

  /**
   * A registered node whose kipam-node runs with {@code env} and the credentials of {@code
   * kubeconfig} (given the node's name), ready ({@code pool} is Ready).
   */
  NodeRig node(String pool, Map<String, String> env, Function<String, Path> kubeconfig)
      throws Exception {
    NodeRig rig = NodeRig.start(client, dir, namespaces, pool, env, kubeconfig);
    started.add(rig);
    return rig;
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable c : started) {
      c.close();
    }
    started.clear();
  }
}
