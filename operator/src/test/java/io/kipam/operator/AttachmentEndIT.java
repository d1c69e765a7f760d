package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The finalizer {@code kipam.io/attachment} against the real control plane, with a short audit
 * interval (2 s) and grace (3 s): the audit ends the attachment of the IPAddresses of a Node that
 * is deleted — live ones are deleted and released, Terminating ones released, another finalizer is
 * kept — with an Event {@code AttachmentEnded} naming the Node; the Terminating IPAddresses of a
 * Node that exists keep their finalizer, since that Node's daemon ends their attachment. Addresses
 * in three namespaces; every Pod they name exists, so only their Node decides.
 */
@WithControlPlane
class AttachmentEndIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final String OTHER_FINALIZER = "example.com/keep";

  @RegisterExtension
  static final OperatorPerClass cluster = OperatorPerClass.withShortAudit(Map.of());

  private final KubernetesClient client = cluster.client();
  private final Kipam kipam = new Kipam(client);

  @Test
  void theAuditEndsTheAttachmentsOfADeletedNodeAndLeavesALiveNodesToItsDaemon() throws Exception {
    String live = Fixtures.uniqueName("live");
    String doomed = Fixtures.uniqueName("doomed");
    Fixtures.registerNode(client, live);
    Fixtures.registerNode(client, doomed);
    IPPool pool =
        kipam.createPool(
            Fixtures.uniqueName("attach"), "10.63.0.0/24", 28, Fixtures.uniqueName("net"));
    String poolName = pool.getMetadata().getName();
    String liveBlock = kipam.claimBlock(pool, "10.63.0.0/28", live).getMetadata().getName();
    String doomedBlock = kipam.claimBlock(pool, "10.63.0.16/28", doomed).getMetadata().getName();
    List<String> namespaces =
        List.of(
            Fixtures.namespace(client, "attach-a"),
            Fixtures.namespace(client, "attach-b"),
            Fixtures.namespace(client, "attach-c"));

    IPAddress allocated =
        allocate(namespaces.get(0), poolName, doomedBlock, doomed, "10.63.0.17", "allocated");
    IPAddress released =
        allocate(namespaces.get(1), poolName, doomedBlock, doomed, "10.63.0.18", "released");
    IPAddress shared =
        allocate(namespaces.get(2), poolName, doomedBlock, doomed, "10.63.0.19", "shared");
    client
        .resource(shared)
        .edit(
            a -> {
              a.getMetadata().getFinalizers().add(OTHER_FINALIZER);
              return a;
            });
    List<IPAddress> kept = new ArrayList<>();
    for (int i = 0; i < namespaces.size(); i++) {
      kept.add(
          allocate(
              namespaces.get(i), poolName, liveBlock, live, "10.63.0." + (i + 1), "kept-" + i));
    }
    // A DEL handled before the Node went: deleted, its attachment not yet over.
    for (IPAddress deleted : List.of(released, shared, kept.get(0), kept.get(1), kept.get(2))) {
      client.resource(deleted).delete();
    }
    client.nodes().withName(doomed).delete();

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              assertThat(kipam.current(allocated))
                  .as("a live address of the deleted Node")
                  .isNull();
              assertThat(kipam.current(released))
                  .as("a Terminating address of the deleted Node")
                  .isNull();
              assertThat(kipam.current(shared).getMetadata().getFinalizers())
                  .as("only kipam.io/attachment is removed")
                  .containsExactly(OTHER_FINALIZER);
            });
    for (IPAddress ended : List.of(allocated, released, shared)) {
      assertThat(kipam.events(ended))
          .anySatisfy(
              e -> {
                assertThat(e.getReason()).isEqualTo("AttachmentEnded");
                assertThat(e.getMessage())
                    .contains(ended.getMetadata().getName())
                    .contains("its Node " + doomed + " does not exist");
              });
    }
    assertThat(kipam.events(allocated)).extracting(Event::getReason).contains("OrphanRemoved");
    assertThat(cluster.operator().metric("kipam_audit_attachments_ended_total"))
        .isGreaterThanOrEqualTo(3);

    cluster.operator().awaitMoreAudits(3, WITHIN);
    for (IPAddress terminating : kept) {
      IPAddress now = kipam.current(terminating);
      assertThat(now.getMetadata().getDeletionTimestamp()).isNotNull();
      assertThat(now.getMetadata().getFinalizers())
          .as("%s is its live Node's daemon's to finish", now.getMetadata().getName())
          .containsExactly(ApiConstants.FINALIZER_ATTACHMENT);
      assertThat(kipam.events(terminating))
          .extracting(Event::getReason)
          .doesNotContain("AttachmentEnded", "OrphanRemoved");
    }

    kept.forEach(kipam::endAttachment);
    client
        .resource(kipam.current(shared))
        .edit(
            a -> {
              a.getMetadata().getFinalizers().remove(OTHER_FINALIZER);
              return a;
            });
  }

  /**
   * An address of a Pod that exists, bound to the address's node, without an owner (the test
   * deletes it when it likes).
   */
  private IPAddress allocate(
      String namespace, String pool, String block, String node, String ip, String pod) {
    return kipam.allocateTo(
        namespace, pool, block, node, ip, kipam.podOn(namespace, pod, node), false);
  }
}
