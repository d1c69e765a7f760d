package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.DaemonProcess;
import io.kipam.system.harness.NodeUnderTest;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The replay that once erased the wrong lease: pod H in one namespace releases address X, pod N in
 * another gets X, kube-apiserver restarts and the daemon's watches reconnect (replaying what they
 * missed). N must keep X: no third pod gets it, CHECK of N passes, and N's DEL removes its object.
 * Ten rounds, each with its own restart.
 */
class WatchReplayIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int ROUNDS = 10;

  private final KubernetesClient client = ControlPlane.shared().client();
  private final ControlPlane controlPlane = ControlPlane.shared();

  @Test
  void aReplayedDeleteOfTheOldHolderNeverTakesTheAddressFromTheNewOne() throws Exception {
    List<String> namespaces =
        List.of(
            Fixtures.namespace(client, "replay-h"),
            Fixtures.namespace(client, "replay-n"),
            Fixtures.namespace(client, "replay-t"));
    String pool = Fixtures.uniqueName("replay");
    try (NodeUnderTest rig = NodeUnderTest.register(client, "kipam-replay-it", "replay-node")) {
      String node = rig.node;
      // One address, reused at once: the re-issue to N is certain, and so is any duplicate.
      Cluster.poolReadiedByOperator(client, pool, Cluster.spec("10.245.0.7/32", 32, 0));
      DaemonProcess daemon = rig.start(controlPlane.adminKubeconfig(), pool);
      Path kipam = rig.kipam;
      String config = Cluster.config("1.1.0", daemon.socket.toString(), pool);
      for (int round = 0; round < ROUNDS; round++) {
        Pod h = Cluster.pod(client, namespaces.get(0), "h-" + round, node);
        Pod n = Cluster.pod(client, namespaces.get(1), "n-" + round, node);
        Pod t = Cluster.pod(client, namespaces.get(2), "t-" + round, node);

        // Right after the last round's DEL and a restart of kube-apiserver, the daemon may not have
        // seen the address go yet and answers "try again" (11), which a runtime retries.
        String x =
            CniCall.whileTryAgain(() -> call(kipam, "ADD", h, config), Duration.ofSeconds(30)).ip();
        assertThat(call(kipam, "DEL", h, config).ok()).isTrue();
        CniCall.Outcome addN = call(kipam, "ADD", n, config);
        assertThat(addN.ip()).as("round %d: N gets the released address", round).isEqualTo(x);

        controlPlane.stopApiServer();
        controlPlane.startApiServer();
        daemon.awaitReady(kipam, pool);

        CniCall.Outcome addT =
            CniCall.whileTryAgain(() -> call(kipam, "ADD", t, config), Duration.ofSeconds(30));
        assertThat(addT.stdout())
            .as("round %d: a third pod finds the pool exhausted, not X free", round)
            .contains("\"code\":100,");
        String check =
            config.replace(
                "\"ipam\"", "\"prevResult\":" + JSON.readTree(addN.stdout()) + ",\"ipam\"");
        CniCall.Outcome checked = call(kipam, "CHECK", n, check);
        assertThat(checked.ok()).as("round %d: CHECK of N: %s", round, checked.stdout()).isTrue();
        assertThat(holders(pool))
            .as("round %d: X held once, by N", round)
            .containsExactly(namespaces.get(1) + "/n-" + round);

        assertThat(call(kipam, "DEL", n, config).ok()).isTrue();
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertThat(holders(pool)).isEmpty());
      }
    }
  }

  private List<String> holders(String pool) {
    return Cluster.addresses(client, pool).stream()
        .map(a -> a.getMetadata().getNamespace() + "/" + a.getSpec().getPod().getName())
        .toList();
  }

  private static CniCall.Outcome call(Path kipam, String command, Pod pod, String config) {
    Map<String, String> env = CniCall.env(command, "c-" + pod.getMetadata().getName(), pod);
    return CniCall.run(kipam, env, config);
  }
}
