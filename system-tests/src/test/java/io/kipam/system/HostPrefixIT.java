package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Host-prefix mode (blockSize /32) on the real API server, with two nodes sharing a range: the
 * block is the allocation, goes back when its address is released, and the other node claims it.
 * Pods are spread over three namespaces.
 */
class HostPrefixIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static NodeRig a;
  private static NodeRig b;

  private final KubernetesClient client = ControlPlane.shared().client();

  @BeforeAll
  static void start(ControlPlane controlPlane, KubernetesClient client) throws Exception {
    String boot = Cluster.readiedPool(client, "boot", Cluster.spec("10.248.255.0/24", 28, 0));
    Path dir = Files.createTempDirectory("kipam-host-prefix-it");
    List<String> namespaces = NodeRig.namespaces(client, "host");
    a = NodeRig.start(controlPlane, client, dir, namespaces, boot, Map.of());
    b = NodeRig.start(controlPlane, client, dir, namespaces, boot, Map.of());
  }

  @AfterAll
  static void stop() throws Exception {
    Close.all(a, b);
  }

  /** A pool of one address in host-prefix mode. */
  private String oneAddress(String address, int reuseDelaySeconds) {
    String pool = Fixtures.uniqueName("host");
    String cidr = address.replaceAll("\\.\\d+$", ".0") + "/24";
    Cluster.poolReadiedByOperator(
        client, pool, Cluster.oneAddressSpec(cidr, address, reuseDelaySeconds));
    return pool;
  }

  /**
   * Node a's block of {@code pool} goes back within {@code within}, and node b's pod {@code pod}
   * then gets its address {@code ip}.
   */
  private void goesBackAndBGetsIt(String pool, String ip, Duration within, int pod) {
    await().atMost(within).untilAsserted(() -> assertThat(a.blocks(pool)).isEmpty());
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(b.add(pool, pod).ip()).isEqualTo(ip));
  }

  @Test
  void afterDelTheBlockIsGoneAndAnotherNodeClaimsIt() {
    String pool = oneAddress("10.248.0.9", 0);
    String ip = a.add(pool, 0).ip();
    assertThat(ip).isEqualTo("10.248.0.9");
    assertThat(a.blocks(pool))
        .singleElement()
        .satisfies(
            block -> {
              assertThat(block.getSpec().getCidr()).isEqualTo("10.248.0.9/32");
            });
    assertThat(CniCall.whileTryAgain(() -> b.add(pool, 1), Duration.ofSeconds(30)).stdout())
        .as("node b: the range is node a's")
        .contains("\"code\":100");

    assertThat(a.del(pool, 0).ok()).isTrue();

    assertThat(a.blocks(pool)).as("the block went with the address").isEmpty();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(b.add(pool, 1).ip())
                    .as("node b's daemon log: %s", b.daemon.log)
                    .isEqualTo(ip));
    assertThat(b.blocks(pool)).hasSize(1);
    assertThat(b.del(pool, 1).ok()).isTrue();
    assertThat(b.blocks(pool)).isEmpty();
  }

  @Test
  void aBlockGoesBackOnceItsAddressHasRestedForTheReuseDelay() {
    String pool = oneAddress("10.248.1.9", 3);
    String ip = a.add(pool, 10).ip();

    assertThat(a.del(pool, 10).ok()).isTrue();

    goesBackAndBGetsIt(pool, ip, Duration.ofSeconds(30), 11);
  }

  @Test
  void aBlockWhoseAddressTheGarbageCollectorRemovedGoesBackToo() {
    String pool = oneAddress("10.248.2.9", 0);
    String ip = a.add(pool, 20).ip();

    // The pod is deleted: the garbage collector deletes its IPAddress, no DEL comes.
    a.deletePod(20);

    goesBackAndBGetsIt(pool, ip, Duration.ofSeconds(60), 21);
  }
}
