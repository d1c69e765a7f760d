package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The audit against the real control plane, with a short interval (2 s), grace (3 s) and pages of
 * two addresses, so one audit reads several pages: orphaned IPAddresses in several namespaces — a
 * block that does not exist, a Node that does not exist, a Pod of the owner's name but another UID
 * on a Node that does not exist — are deleted with an Event each, and an address whose Pod, block
 * and Node exist stays. So does an address of a live Node whose Pod has another UID: the audit
 * reads no Pods for a Node that exists (design §6; that node's daemon audits its own addresses
 * against its pod watch). The addresses carry {@code kipam.io/attachment} as the daemon writes
 * them: the orphans of a live Node stay Terminating until its daemon ends their attachment (played
 * here), the orphan of a Node that is gone is removed for good by the audit.
 *
 * <p>One address held by two IPAddresses in two namespaces is reported (Events, gauge, the pool's
 * condition {@code DuplicateAddresses}) and never deleted.
 *
 * <p>The orphan whose Pod is wrong names it in {@code spec.pod} only, without an ownerReference:
 * with one, the garbage collector would delete it before the audit could. The Pods have no node
 * (there is no kubelet), but the one of the orphan whose Node is gone: a Pod is looked for among
 * the Pods bound to the Node its address names, one list per Node that is gone.
 */
@WithControlPlane
class OrphanAuditIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);

  @RegisterExtension
  static final OperatorPerClass cluster =
      OperatorPerClass.withShortAudit(Map.of("KIPAM_AUDIT_PAGE_SIZE", "2")).andNodes("node");

  private final KubernetesClient client = cluster.client();
  private final Kipam kipam = new Kipam(client);
  private final String node = cluster.node();

  @Test
  void orphansInEveryNamespaceAreRemovedWithAnEventAndTheLiveAddressStays() throws Exception {
    Kipam.PoolWithBlock claimed =
        kipam.poolWithBlock("audit", "10.60.0.0/24", "10.60.0.0/28", node);
    String poolName = claimed.poolName();
    String blockName = claimed.blockName();
    String[] namespaces = {
      Fixtures.namespace(client, "audit-a"),
      Fixtures.namespace(client, "audit-b"),
      Fixtures.namespace(client, "audit-c")
    };

    PodReference livePod = kipam.pod(namespaces[0], "live");
    IPAddress live =
        kipam.allocateTo(namespaces[0], poolName, blockName, node, "10.60.0.1", livePod, true);

    kipam.pod(namespaces[1], "reused");
    IPAddress podOfLiveNode =
        kipam.allocateTo(
            namespaces[1],
            poolName,
            blockName,
            node,
            "10.60.0.2",
            new PodReference("reused", UUID.randomUUID().toString()),
            false);
    kipam.pod(namespaces[0], "reused-too");
    IPAddress wrongUid =
        kipam.allocateTo(
            namespaces[0],
            poolName,
            blockName,
            Fixtures.uniqueName("gone-node"),
            "10.60.0.5",
            new PodReference("reused-too", UUID.randomUUID().toString()),
            false);

    PodReference blockPod = kipam.pod(namespaces[2], "no-block");
    IPAddress blockGone =
        kipam.allocateTo(
            namespaces[2],
            poolName,
            Fixtures.uniqueName("gone-block"),
            node,
            "10.60.0.3",
            blockPod,
            true);

    // A Pod still bound to a Node that is gone (the pod garbage collector takes it only after its
    // quarantine): the Pod is there, the Node is not.
    String goneNode = Fixtures.uniqueName("gone-node");
    PodReference nodePod = kipam.podOn(namespaces[2], "no-node", goneNode);
    IPAddress nodeGone =
        kipam.allocateTo(namespaces[2], poolName, blockName, goneNode, "10.60.0.4", nodePod, true);

    Map<IPAddress, String> orphans =
        Map.of(
            wrongUid, "its Pod " + namespaces[0] + "/reused-too",
            blockGone, "its IPBlock",
            nodeGone, "its Node");
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              assertThat(kipam.current(nodeGone))
                  .as("the orphan of a Node that is gone is removed")
                  .isNull();
              assertThat(kipam.current(wrongUid))
                  .as("the orphan of a Node that is gone, whose Pod is wrong, is removed")
                  .isNull();
              for (IPAddress onLiveNode : List.of(blockGone)) {
                IPAddress now = kipam.current(onLiveNode);
                assertThat(now.getMetadata().getDeletionTimestamp())
                    .as("%s is deleted", onLiveNode.getMetadata().getName())
                    .isNotNull();
                assertThat(now.getMetadata().getFinalizers())
                    .as("its node's daemon ends its attachment")
                    .containsExactly(ApiConstants.FINALIZER_ATTACHMENT);
              }
            });
    for (Map.Entry<IPAddress, String> orphan : orphans.entrySet()) {
      await()
          .atMost(WITHIN)
          .untilAsserted(
              () ->
                  assertThat(kipam.events(orphan.getKey()))
                      .anySatisfy(
                          e -> {
                            assertThat(e.getReason()).isEqualTo("OrphanRemoved");
                            assertThat(e.getMessage()).contains(orphan.getValue());
                          }));
    }
    kipam.endAttachment(blockGone);
    assertThat(cluster.operator().metric("kipam_audit_orphans_removed_total{reason=\"pod\"}"))
        .isGreaterThanOrEqualTo(1);
    assertThat(cluster.operator().metric("kipam_audit_orphans_removed_total{reason=\"block\"}"))
        .isGreaterThanOrEqualTo(1);
    assertThat(cluster.operator().metric("kipam_audit_orphans_removed_total{reason=\"node\"}"))
        .isGreaterThanOrEqualTo(1);

    cluster.operator().awaitMoreAudits(2, WITHIN);
    IPAddress stillThere = kipam.current(live);
    assertThat(stillThere).as("the live address stays").isNotNull();
    assertThat(stillThere.getMetadata().getUid()).isEqualTo(live.getMetadata().getUid());
    assertThat(kipam.events(live)).noneMatch(e -> "OrphanRemoved".equals(e.getReason()));
    IPAddress notAudited = kipam.current(podOfLiveNode);
    assertThat(notAudited.getMetadata().getDeletionTimestamp())
        .as("no Pod is read for an address of a live Node: its daemon audits it")
        .isNull();
    assertThat(kipam.events(podOfLiveNode)).noneMatch(e -> "OrphanRemoved".equals(e.getReason()));
    assertThat(cluster.operator().metricSum("kipam_audit_objects_scanned_total"))
        .isGreaterThanOrEqualTo(4);
  }

  @Test
  void anAddressHeldInTwoNamespacesIsReportedAndNeitherHolderIsDeleted() throws Exception {
    Kipam.PoolWithBlock claimed = kipam.poolWithBlock("dup", "10.61.0.0/24", "10.61.0.0/28", node);
    String poolName = claimed.poolName();
    String blockName = claimed.blockName();
    String first = Fixtures.namespace(client, "dup-a");
    String second = Fixtures.namespace(client, "dup-b");
    IPAddress a =
        kipam.allocateTo(
            first, poolName, blockName, node, "10.61.0.5", kipam.pod(first, "one"), true);
    IPAddress b =
        kipam.allocateTo(
            second, poolName, blockName, node, "10.61.0.5", kipam.pod(second, "two"), true);

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              Condition duplicate = kipam.requiredCondition(poolName, "DuplicateAddresses");
              assertThat(duplicate.getStatus()).isEqualTo("True");
              assertThat(duplicate.getMessage())
                  .contains("10.61.0.5")
                  .contains(first + "/")
                  .contains(second + "/");
            });
    for (IPAddress holder : List.of(a, b)) {
      await()
          .atMost(WITHIN)
          .untilAsserted(
              () ->
                  assertThat(kipam.events(holder))
                      .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("DuplicateAddress")));
    }
    await()
        .atMost(WITHIN)
        .untilAsserted(() -> assertThat(kipam.eventReasons(poolName)).contains("DuplicateAddress"));
    assertThat(cluster.operator().metric("kipam_audit_duplicates")).isGreaterThanOrEqualTo(1);
    assertThat(kipam.current(a)).as("a duplicate is never deleted").isNotNull();
    assertThat(kipam.current(b)).as("a duplicate is never deleted").isNotNull();

    kipam.delete(b);
    await()
        .atMost(WITHIN)
        .untilAsserted(() -> assertThat(kipam.condition(poolName, "DuplicateAddresses")).isEmpty());
    assertThat(kipam.current(a)).isNotNull();
  }
}
