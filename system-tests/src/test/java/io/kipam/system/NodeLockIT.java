package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.DaemonProcess.NodeLockState;
import io.kipam.system.harness.Installer;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two kipam-node processes on one node, as in a rolling update: only one ever serves. */
class NodeLockIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  @Test
  void secondDaemonOnANodeWaitsForTheFirstToExit(ControlPlane controlPlane, KubernetesClient client)
      throws Exception {
    NodeUnderTest lockNode = NodeUnderTest.register(client, "kipam-lock-it", "lock-node");
    Path dir = lockNode.dir;
    String node = lockNode.node;
    String pool = Cluster.readiedPool(client, "lock", Cluster.spec("10.254.0.0/24", 28, 0));
    String namespace = Fixtures.namespace(client, "lock");
    Pod pod = Cluster.pod(client, namespace, "lock-0", node);
    DaemonProcess first = new DaemonProcess(dir, node, controlPlane.adminKubeconfig());
    DaemonProcess second =
        new DaemonProcess(dir, node, controlPlane.adminKubeconfig(), node + "-second.log");
    Path kipam = Installer.install(dir.resolve("bin"), first.socket);
    String config = Cluster.config("1.1.0", first.socket.toString(), pool);
    Map<String, String> add =
        CniCall.env("ADD", "c-lock", "eth0", namespace, "lock-0", pod.getMetadata().getUid());
    try {
      first.start();
      first.awaitReady(kipam, pool);
      CniCall.Outcome before = CniCall.run(kipam, add, config);
      assertThat(before.ok()).as(before.stdout()).isTrue();

      assertThat(first.nodeLock()).isEqualTo(NodeLockState.HELD);
      second.start();
      await()
          .atMost(Duration.ofSeconds(60))
          .alias("the second daemon blocks on the node lock; its log: " + second.log)
          .until(() -> second.nodeLock() == NodeLockState.WAITING);
      CniCall.Outcome meanwhile = CniCall.run(kipam, add, config);
      assertThat(meanwhile.stdout())
          .as("the first daemon still serves, the same answer")
          .isEqualTo(before.stdout());
      assertThat(second.nodeLock()).as("still waiting").isEqualTo(NodeLockState.WAITING);

      first.kill();
      second.awaitReady(kipam, pool);
      assertThat(second.nodeLock()).isEqualTo(NodeLockState.HELD);
      CniCall.Outcome after = CniCall.run(kipam, add, config);
      assertThat(after.stdout())
          .as("the new daemon knows the allocation")
          .isEqualTo(before.stdout());
    } finally {
      first.close();
      second.close();
    }
  }
}
