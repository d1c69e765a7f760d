package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** kipam-node keeps its blocks' status.allocated current, coalesced, on the real API server. */
class BlockStatusIT {

  /** Makes the test's pools Ready and keeps their status, as in a cluster. */
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static NodeRig rig;
  private static String pool;

  private final KubernetesClient client = ControlPlane.shared().client();

  @BeforeAll
  static void start(KubernetesClient client) throws Exception {
    pool = Cluster.readiedPool(client, "status", Cluster.spec("10.246.0.0/24", 26, 0));
    rig = NodeRig.startAlone(client, "status", pool);
  }

  @AfterAll
  static void stop() throws Exception {
    Close.all(rig);
  }

  private Long allocated(String block) {
    IPBlock b = client.resources(IPBlock.class).withName(block).get();
    return b.getStatus() == null ? null : b.getStatus().getAllocated();
  }

  private void awaitAllocated(String block, long expected) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(allocated(block)).isEqualTo(expected));
  }

  @Test
  void allocatedFollowsAddAndDelWithinSecondsAndIsWrittenFarLessOftenThanThereAreCalls()
      throws Exception {
    String first = rig.add(pool, 0).ip();
    String block = rig.blockOf(pool, first).orElseThrow().getMetadata().getName();
    AtomicInteger statusWrites = new AtomicInteger();
    int calls = 1;
    try (Watch watch = countModifications(block, statusWrites)) {
      for (int i = 1; i < 24; i++) {
        assertThat(rig.add(pool, i).ok()).isTrue();
        calls++;
      }
      awaitAllocated(block, 24);
      for (int i = 0; i < 10; i++) {
        assertThat(rig.del(pool, i).ok()).isTrue();
        calls++;
      }
      awaitAllocated(block, 14);
    }

    System.out.printf(
        "BlockStatusIT: %d ADD/DEL calls, %d status writes of their block%n",
        calls, statusWrites.get());
    assertThat(statusWrites.get())
        .as("status writes for %d calls (daemon log: %s)", calls, rig.daemon.log)
        .isPositive()
        .isLessThanOrEqualTo(calls / 3);
  }

  @Test
  void aCountChangedByHandIsPutRightWithinSeconds() {
    String other = Cluster.readiedPool(client, "status", Cluster.spec("10.246.1.0/24", 26, 0));
    String ip = rig.add(other, 100).ip();
    String block = rig.blockOf(other, ip).orElseThrow().getMetadata().getName();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> allocated(block) != null && allocated(block) > 0);
    Long right = allocated(block);

    client
        .resources(IPBlock.class)
        .withName(block)
        .subresource("status")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"status\":{\"allocated\":999}}");

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(allocated(block)).isEqualTo(right));
    assertThat(rig.del(other, 100).ok()).isTrue();
  }

  /** Counts changes of {@code block} after the watch starts: only kipam-node writes it here. */
  private Watch countModifications(String block, AtomicInteger count) {
    return client
        .resources(IPBlock.class)
        .withName(block)
        .watch(
            new Watcher<>() {
              @Override
              public void eventReceived(Action action, IPBlock resource) {
                if (action == Action.MODIFIED) {
                  count.incrementAndGet();
                }
              }

              @Override
              public void onClose(WatcherException cause) {}
            });
  }
}
