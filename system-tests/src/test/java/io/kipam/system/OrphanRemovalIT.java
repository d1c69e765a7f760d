package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.operator.OperatorSettings;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.TimerFamilies;
import io.kipam.testing.BesideTheSuite;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Orphaned IPAddresses that real kipam-node daemons wrote are removed, each way an address can be
 * left behind, with kipam-operator as its own process on a control plane of the test's own whose
 * kube-controller-manager runs without the garbage collector, as in a cluster where garbage
 * collection stopped. The audit is split by who already knows (design §6):
 *
 * <ul>
 *   <li>the Pod was deleted and nothing collected its address: the node's own daemon finds it (its
 *       pod watch no longer shows the pod, a fresh read confirms it, after its orphan grace) and
 *       releases it with an {@code OrphanReleased} Event;
 *   <li>its block was deleted by hand, its finalizer taken off: kipam-operator's audit deletes it
 *       ({@code OrphanRemoved}), and it stays Terminating ({@code AttachmentKept}) while its pod
 *       exists, going when the pod is deleted;
 *   <li>its Node is gone with its pod (the daemon stopped, the Pod deleted as the pod garbage
 *       collector deletes the Pods of a deleted Node, the Node object deleted): kipam-operator
 *       removes it as an orphan of its Pod and ends, in the same removal, the attachment no daemon
 *       can end.
 * </ul>
 *
 * An address whose owner reference names a UID no Pod has, while the Pod its {@code spec.pod} names
 * lives, is the garbage collector's to find (stopped here): neither the audit, which reads no Pods
 * for a live Node, nor the daemon, which sees its pod, touches it. The live addresses of pods in
 * three namespaces all stay.
 *
 * <p>Both audits' timers are the family "orphan audits" ({@link TimerFamilies#orphanAudits}):
 * shortened (kipam-operator's pause 2 s and grace 3 s, kipam-node's grace 3 s), or at the product's
 * defaults (5 min, 10 min and 1 min: a quarter of an hour's wait). The control plane is the class's
 * own, so the class runs beside the rest of the suite (docs/development.md, "Waiting beside the
 * suite").
 */
@BesideTheSuite
class OrphanRemovalIT {

  private static final Duration WITHIN = Duration.ofSeconds(90);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");

  private static ControlPlane controlPlane;
  private static KubernetesClient client;
  private static int subnets;
  private static Duration nodeWithin;
  private static Duration operatorWithin;
  private KipamProcesses processes;

  @BeforeAll
  static void startCluster() throws Exception {
    controlPlane = ControlPlane.fresh(List.of("garbage-collector-controller"));
    client = controlPlane.client();
    KipamCrds.install(client);
  }

  @AfterEach
  void stopProcesses() throws Exception {
    Close.all(processes);
  }

  @AfterAll
  static void stopCluster() throws Exception {
    Close.all(controlPlane);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#orphanAudits")
  void everyKindOfOrphanIsRemovedWithAnEventAndNoLiveAddressIs(TimerFamilies.OrphanAudits audits)
      throws Exception {
    processes = new KipamProcesses(controlPlane, client, "orphan");
    Map<String, String> operatorEnv = new HashMap<>(Map.of("KIPAM_AUDIT_PAGE_SIZE", "3"));
    operatorEnv.putAll(audits.operator());
    OperatorSettings operator = processes.leadingOperator(operatorEnv, WITHIN).settings();
    // An orphan is first seen up to a pause after it appears, and removed at the first pass at
    // least the grace after that; the node reads a pod at most once a grace.
    operatorWithin =
        operator.auditInterval().multipliedBy(2).plus(operator.orphanGrace()).plus(WITHIN);
    Map<String, String> daemon = TimerFamilies.over(DAEMON, audits.daemon());
    String pool =
        Cluster.readiedPool(client, "orphan", Cluster.spec("10.214." + subnets++ + ".0/24", 28, 0));
    NodeRig live = processes.node(pool, daemon);
    NodeRig handBlock = processes.node(pool, daemon);
    NodeRig doomed = processes.node(pool, daemon);
    nodeWithin = live.daemon.settings().orphanGrace().multipliedBy(2).plus(WITHIN);
    System.out.printf(
        "kipam-operator: audit pause %s, orphan grace %s; kipam-node: orphan grace %s%n",
        operator.auditInterval(), operator.orphanGrace(), live.daemon.settings().orphanGrace());
    for (int i = 0; i < 6; i++) {
      assertThat(live.add(pool, i).ok()).isTrue();
    }

    // Garbage collection stopped: the Pod goes, its address stays.
    IPAddress podGone = allocate(live, pool, 10);
    live.deletePod(10);

    // An owner UID that no Pod has.
    IPAddress wrongOwner = allocate(live, pool, 11);
    client
        .resource(wrongOwner)
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"replace\",\"path\":\"/metadata/ownerReferences/0/uid\",\"value\":\""
                + UUID.randomUUID()
                + "\"}]");

    // Allocated before the block below is deleted by hand: a node claiming a slot afterwards may
    // claim that one again, and then its leftover address is no longer an orphan but a taken
    // address of the new holder (HandDeletedBlockIT).
    IPAddress nodeGone = allocate(doomed, pool, 13);

    // The block deleted by hand, bypassing its finalizer: deleted, then the finalizer taken off
    // (taken off first, kipam-operator would put it back before the delete).
    IPAddress blockGone = allocate(handBlock, pool, 12);
    IPBlock block = client.resources(IPBlock.class).withName(blockGone.getSpec().getBlock()).get();
    client.resource(block).withGracePeriod(0).delete();
    client
        .resources(IPBlock.class)
        .withName(block.getMetadata().getName())
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
    await()
        .atMost(WITHIN)
        .until(
            () ->
                client.resources(IPBlock.class).withName(block.getMetadata().getName()).get()
                    == null);

    // The Node gone with its pod, as a cloud node vanishes: its daemon stopped, its Pod deleted as
    // kube-controller-manager's pod garbage collector deletes the Pods of a deleted Node (without
    // a DEL), its Node object deleted.
    doomed.close();
    doomed.deletePod(13);
    client.nodes().withName(doomed.node).delete();

    expectReleasedByItsNode(podGone, "does not exist");
    expectKeptUntilItsPodGoes(
        blockGone,
        "its IPBlock " + block.getMetadata().getName() + " does not exist",
        handBlock,
        12);
    // An orphan of its Pod, found first; its attachment ended in the same removal, since no daemon
    // is left to end it: gone, not Terminating.
    expectRemoved(nodeGone, "its Pod " + nodeGone.getMetadata().getNamespace() + "/" + doomed.node);

    IPAddress untouched =
        client
            .resources(IPAddress.class)
            .inNamespace(wrongOwner.getMetadata().getNamespace())
            .withName(wrongOwner.getMetadata().getName())
            .get();
    assertThat(untouched.getMetadata().getDeletionTimestamp())
        .as("an address whose spec.pod lives is left to the garbage collector")
        .isNull();
    List<IPAddress> left = Cluster.addresses(client, pool);
    assertThat(left)
        .as("the six live addresses and the one with a wrong owner, and nothing else")
        .hasSize(7);
    assertThat(left).allMatch(a -> a.getMetadata().getDeletionTimestamp() == null);
    assertThat(left).allMatch(a -> a.getSpec().getNode().equals(live.node));
    assertThat(left.stream().map(a -> a.getMetadata().getNamespace()).distinct()).hasSize(3);
    live.deletePod(11);
  }

  /** ADD for pod {@code i} of {@code rig}; its IPAddress. */
  private static IPAddress allocate(NodeRig rig, String pool, int i) {
    CniCall.Outcome outcome = rig.add(pool, i);
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    return Cluster.addresses(client, pool).stream()
        .filter(a -> a.getSpec().getIp().equals(outcome.ip()))
        .findFirst()
        .orElseThrow();
  }

  /**
   * {@code address} is deleted as an orphan (Event naming {@code why}) but stays Terminating while
   * pod {@code i} of {@code rig}, whose attachment it is, exists; deleting the pod frees it.
   */
  private static void expectKeptUntilItsPodGoes(IPAddress address, String why, NodeRig rig, int i) {
    String namespace = address.getMetadata().getNamespace();
    String name = address.getMetadata().getName();
    await()
        .atMost(operatorWithin)
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              assertThat(events(namespace, name))
                  .anyMatch(
                      e -> "OrphanRemoved".equals(e.getReason()) && e.getMessage().contains(why));
              assertThat(events(namespace, name))
                  .anyMatch(e -> "AttachmentKept".equals(e.getReason()));
            });
    IPAddress kept = client.resources(IPAddress.class).inNamespace(namespace).withName(name).get();
    assertThat(kept.getMetadata().getDeletionTimestamp()).isNotNull();
    System.out.printf(
        "%s/%s (%s) deleted as an orphan (%s) and kept while its pod exists%n",
        namespace, name, address.getSpec().getIp(), why);
    rig.deletePod(i);
    awaitGone(namespace, name, " gone with its pod", WITHIN);
  }

  /**
   * Waits until the IPAddress {@code namespace}/{@code name} is gone; {@code what} ends the alias.
   */
  private static void awaitGone(String namespace, String name, String what, Duration within) {
    await()
        .atMost(within)
        .pollInterval(Duration.ofMillis(500))
        .alias(namespace + "/" + name + what)
        .until(
            () ->
                client.resources(IPAddress.class).inNamespace(namespace).withName(name).get()
                    == null);
  }

  /** {@code address} is released by its node's daemon, with an Event naming {@code why}. */
  private static void expectReleasedByItsNode(IPAddress address, String why) {
    expectGone(address, "OrphanReleased", why, "its node released", nodeWithin);
  }

  /** {@code address} is removed by kipam-operator's audit, with an Event naming {@code why}. */
  private static void expectRemoved(IPAddress address, String why) {
    expectGone(address, "OrphanRemoved", why, "removed", operatorWithin);
  }

  /** {@code address} goes, and an Event {@code reason} whose message names {@code why} says so. */
  private static void expectGone(
      IPAddress address, String reason, String why, String verb, Duration within) {
    String namespace = address.getMetadata().getNamespace();
    String name = address.getMetadata().getName();
    long start = System.nanoTime();
    awaitGone(namespace, name, " gone", within);
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(events(namespace, name))
                    .as("%s Event of %s/%s", reason, namespace, name)
                    .anyMatch(e -> reason.equals(e.getReason()) && e.getMessage().contains(why)));
    System.out.printf(
        "%s %s/%s (%s) %.1f s after it was looked for: %s%n",
        verb, namespace, name, address.getSpec().getIp(), (System.nanoTime() - start) / 1e9, why);
  }

  private static List<Event> events(String namespace, String name) {
    return client
        .v1()
        .events()
        .inNamespace(namespace)
        .withField("involvedObject.name", name)
        .list()
        .getItems();
  }
}
