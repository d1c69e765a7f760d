package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.ApiConstants;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The installed policy {@code kipam-node-demand-own-node}: a node's daemon (a token bound to its
 * Node) may write the annotation {@code kipam.io/demand} of its own Node, and nothing else of it,
 * and nothing of another Node.
 */
@WithControlPlane
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DemandPolicyIT {

  private static final String SUFFIX = Long.toString(System.nanoTime() % 100_000, 36);
  private static final String MINE = "demand-a-" + SUFFIX;
  private static final String THEIRS = "demand-b-" + SUFFIX;

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient admin = controlPlane.client();
  private KubernetesClient daemon;

  @BeforeAll
  void install() {
    KipamInstall.applyWith(controlPlane, List.of(MINE, THEIRS), List.of());
    daemon = KipamInstall.nodeClient(controlPlane, MINE);
    // A policy takes effect a moment after it is stored: wait until a label change is refused.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThatThrownBy(() -> patch(MINE, "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}"))
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("kipam-node-demand-own-node"));
  }

  @AfterAll
  void cleanUp() {
    if (daemon != null) {
      daemon.close();
    }
    admin.nodes().withName(MINE).delete();
    admin.nodes().withName(THEIRS).delete();
  }

  @Test
  void aDaemonRecordsAndWithdrawsTheDemandOfItsOwnNode() {
    patch(MINE, demand("pods-v4,pods-v6"));
    assertThat(admin.nodes().withName(MINE).get().getMetadata().getAnnotations())
        .containsEntry(ApiConstants.ANNOTATION_DEMAND, "pods-v4,pods-v6");

    patch(MINE, "{\"metadata\":{\"annotations\":{\"kipam.io/demand\":null}}}");
    assertThat(admin.nodes().withName(MINE).get().getMetadata().getAnnotations())
        .doesNotContainKey(ApiConstants.ANNOTATION_DEMAND);
  }

  @Test
  void aDaemonMayNotWriteAnotherNodesDemand() {
    assertThatThrownBy(() -> patch(THEIRS, demand("pods-v4")))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining(
            "kipam-node may change only the Node its service-account token is bound to ("
                + MINE
                + "), not Node "
                + THEIRS);
  }

  @Test
  void aDaemonMayChangeNothingElseOfItsOwnNode() {
    String only = "kipam-node of node " + MINE + " may change only the annotation kipam.io/demand";
    for (String change :
        new String[] {
          "{\"metadata\":{\"labels\":{\"kipam.io/pools\":\"all\"}}}",
          "{\"metadata\":{\"annotations\":{\"example.com/other\":\"x\"}}}",
          "{\"spec\":{\"unschedulable\":true}}",
          "{\"metadata\":{\"finalizers\":[\"example.com/keep\"]}}"
        }) {
      assertThatThrownBy(() -> patch(MINE, change))
          .as(change)
          .isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining(only);
    }
  }

  private static String demand(String pools) {
    return "{\"metadata\":{\"annotations\":{\"kipam.io/demand\":\"" + pools + "\"}}}";
  }

  private void patch(String node, String mergePatch) {
    daemon.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch);
  }
}
