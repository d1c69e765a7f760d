package io.kipam.system.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The preamble of an IT that runs one node's kipam-node itself, without a {@link NodeRig}: kipam's
 * CRDs, a temporary directory, a registered Node and, once {@link #start}ed, its daemon with the
 * installed {@code kipam} executable. {@link #close} stops the daemon.
 */
public final class NodeUnderTest implements AutoCloseable {

  public final Path dir;
  public final String node;
  public DaemonProcess daemon;
  public Path kipam;

  private NodeUnderTest(Path dir, String node) {
    this.dir = dir;
    this.node = node;
  }

  /**
   * Installs kipam's CRDs, makes a temporary directory named {@code dirPrefix…} and registers a
   * Node named {@code nodePrefix-…}; no daemon runs yet.
   */
  public static NodeUnderTest register(KubernetesClient client, String dirPrefix, String nodePrefix)
      throws IOException {
    KipamCrds.install(client);
    Path dir = Files.createTempDirectory(dirPrefix);
    String node = Fixtures.uniqueName(nodePrefix);
    Fixtures.registerNode(client, node);
    return new NodeUnderTest(dir, node);
  }

  /**
   * Starts the node's kipam-node with {@code kubeconfig} and installs {@code kipam} for it, without
   * waiting until the daemon is ready.
   */
  public DaemonProcess launch(Path kubeconfig) throws IOException, InterruptedException {
    daemon = new DaemonProcess(dir, node, kubeconfig);
    kipam = Installer.install(dir.resolve("bin"), daemon.socket);
    return daemon.start();
  }

  /** {@link #launch}, then waits until STATUS of {@code pool} through {@code kipam} succeeds. */
  public DaemonProcess start(Path kubeconfig, String pool)
      throws IOException, InterruptedException {
    launch(kubeconfig);
    daemon.awaitReady(kipam, pool);
    return daemon;
  }

  @Override
  public void close() throws InterruptedException {
    if (daemon != null) {
      daemon.close();
    }
  }
}
