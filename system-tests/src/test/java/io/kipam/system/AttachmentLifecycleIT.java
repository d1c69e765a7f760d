package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.HandWrittenAddresses;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An address stays taken while its attachment lives, whoever deletes its IPAddress (design §5b),
 * with kipam-operator and kipam-node as processes and pods over three namespaces. Each pool has one
 * /28 block (14 addresses) on one node and is filled up, so an address that came free too early
 * would be handed to the next pod at once: a probe ADD in another namespace must fail with "pool
 * exhausted" (code 100) for as long as the address must stay taken. Once it is free, it comes back
 * only after the pool's reuse delay, counted from a moment before its attachment ended.
 *
 * <p>Each edge of the pod lifecycle runs with and without a SIGKILL of the node's daemon; where the
 * kill lands, which namespace or pod is the victim and in what order pods go are drawn from a seed
 * printed at the start (rerun one with {@code -Dkipam.seed=<seed>}).
 */
class AttachmentLifecycleIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final int REUSE_SECONDS = 10;
  private static final int ADDRESSES = 14;
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");
  private static final AtomicInteger SUBNETS = new AtomicInteger();

  private final KubernetesClient client = ControlPlane.shared().client();
  private final SeededRandom random = new SeededRandom();
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("attach");
  private String pool;
  private NodeRig rig;

  @BeforeEach
  void setUp() throws Exception {
    random.print("AttachmentLifecycleIT");
    pool = Fixtures.uniqueName("attach");
    Cluster.poolReadiedByOperator(
        client,
        pool,
        Cluster.spec("10.233." + SUBNETS.incrementAndGet() + ".0/28", 28, REUSE_SECONDS));
    rig = processes.node(pool, DAEMON);
  }

  /**
   * Acceptance 1 (and 4): a namespace's IPAddresses deleted before its pods, as the namespace
   * controller of Kubernetes 1.30-1.32 does, while the pods stay Terminating (grace 1 h, no kubelet
   * to end them).
   */
  @ParameterizedTest(name = "daemon killed in the middle: {0}")
  @ValueSource(booleans = {false, true})
  void aNamespaceWhoseAddressesGoBeforeItsPodsKeepsThemUntilEachPodIsGone(boolean kill)
      throws Exception {
    Map<Integer, String> ips = fill();
    int victim = random.nextInt(3);
    String namespace = rig.namespaces().get(victim);
    List<Integer> victims = new ArrayList<>();
    ips.keySet().stream().filter(i -> i % 3 == victim).forEach(victims::add);
    Kill at = Kill.drawn(kill, random, 3);
    System.out.printf("victim namespace %s, pods %s, %s%n", namespace, victims, at);

    at.maybeKill(0, rig);
    for (int i : victims) {
      client.resource(rig.pod(i)).withGracePeriod(3600).delete();
    }
    client.resources(IPAddress.class).inNamespace(namespace).delete();
    client.namespaces().withName(namespace).delete();
    at.maybeRestart(0, rig);
    awaitDeletedButKept(victims.stream().map(ips::get).toList());

    at.maybeKill(1, rig);
    at.maybeRestart(1, rig);
    assertExhausted();

    Collections.shuffle(victims, random);
    long attachmentsEnd = System.nanoTime();
    for (int i : victims) {
      client.resource(rig.pod(i)).withGracePeriod(0).delete();
    }
    awaitGone(victims.stream().map(ips::get).toList());
    at.maybeKill(2, rig);
    at.maybeRestart(2, rig);
    expectHandedOutAgain(
        victims.stream().map(ips::get).collect(Collectors.toSet()), attachmentsEnd);
  }

  /**
   * Acceptance 2 (and 4): a static pod's mirror Pod deleted and created again three times while its
   * sandbox lives; then its CNI DEL frees the address.
   */
  @ParameterizedTest(name = "daemon killed in the middle: {0}")
  @ValueSource(booleans = {false, true})
  void aStaticPodKeepsItsAddressThroughNewMirrorPodsUntilItsDel(boolean kill) throws Exception {
    int before = random.nextInt(ADDRESSES);
    Map<Integer, String> ips = fill(0, before);
    String namespace = rig.namespaces().get(random.nextInt(3));
    String staticUid = UUID.randomUUID().toString();
    String name = "static-web-" + rig.node;
    mirrorPod(namespace, name, staticUid);
    CniCall.Outcome added = staticCall("ADD", namespace, name, staticUid);
    assertThat(added.ok()).as(added.stdout()).isTrue();
    String ip = added.ip();
    ips.putAll(fill(before, ADDRESSES - 1 - before));
    assertExhausted();
    IPAddress object = addressOf(ip);
    assertThat(object.getMetadata().getOwnerReferences())
        .as("a static pod's address is held by its Node")
        .singleElement()
        .satisfies(o -> assertThat(o.getKind()).isEqualTo("Node"));
    Kill at = Kill.drawn(kill, random, 3);
    System.out.printf("static pod %s/%s has %s; %s%n", namespace, name, ip, at);

    for (int round = 0; round < 3; round++) {
      at.maybeKill(round, rig);
      Pod mirror = client.pods().inNamespace(namespace).withName(name).get();
      client.resource(mirror).withGracePeriod(0).delete();
      await()
          .atMost(WITHIN)
          .until(() -> client.pods().inNamespace(namespace).withName(name).get() == null);
      if (!at.downIn(round)) {
        assertExhausted();
      }
      mirrorPod(namespace, name, staticUid);
      at.maybeRestart(round, rig);
      assertExhausted();
      IPAddress still = addressOf(ip);
      assertThat(still.getMetadata().getUid()).isEqualTo(object.getMetadata().getUid());
      assertThat(still.getMetadata().getDeletionTimestamp()).isNull();
    }

    delThenHandedOutAgain(ip, () -> staticCall("DEL", namespace, name, staticUid));
  }

  /**
   * Acceptance 3 (and 4): an IPAddress deleted by hand while its pod runs stays Terminating, with
   * an Event saying why; the pod's DEL frees it.
   */
  @ParameterizedTest(name = "daemon killed in the middle: {0}")
  @ValueSource(booleans = {false, true})
  void anAddressDeletedByHandStaysWhileItsPodRunsAndItsDelFreesIt(boolean kill) throws Exception {
    Map<Integer, String> ips = fill();
    int victim = random.nextInt(ADDRESSES);
    String ip = ips.get(victim);
    Pod pod = rig.pod(victim);
    Kill at = Kill.drawn(kill, random, 2);
    System.out.printf(
        "IPAddress of %s/%s (%s) deleted by hand; %s%n",
        pod.getMetadata().getNamespace(), pod.getMetadata().getName(), ip, at);

    at.maybeKill(0, rig);
    IPAddress object = addressOf(ip);
    client.resource(object).delete();
    at.maybeRestart(0, rig);
    awaitDeletedButKept(List.of(ip));
    String why =
        "kept: pod " + pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(events(object))
                    .anyMatch(
                        e ->
                            "AttachmentKept".equals(e.getReason())
                                && e.getMessage().startsWith(why)));
    assertExhausted();

    at.maybeKill(1, rig);
    at.maybeRestart(1, rig);
    delThenHandedOutAgain(ip, () -> rig.del(pool, victim));
  }

  /**
   * Acceptance 5 (and 4): a pod moved to phase Failed without a DEL has its address freed after the
   * reuse delay; the addresses of Running pods never are.
   */
  @ParameterizedTest(name = "daemon killed in the middle: {0}")
  @ValueSource(booleans = {false, true})
  void aFailedPodsAddressIsFreedWithoutADelAndARunningPodsNeverIs(boolean kill) throws Exception {
    Map<Integer, String> ips = fill();
    List<Integer> order = new ArrayList<>(ips.keySet());
    Collections.shuffle(order, random);
    int failed = order.get(0);
    List<Integer> running = order.subList(1, 4);
    Kill at = Kill.drawn(kill, random, 2);
    System.out.printf("pod %d Failed, pods %s Running; %s%n", failed, running, at);
    for (int i : running) {
      phase(rig.pod(i), "Running");
    }

    at.maybeKill(0, rig);
    long attachmentEnds = System.nanoTime();
    phase(rig.pod(failed), "Failed");
    at.maybeRestart(0, rig);
    awaitGone(List.of(ips.get(failed)));
    at.maybeKill(1, rig);
    at.maybeRestart(1, rig);
    expectHandedOutAgain(Set.of(ips.get(failed)), attachmentEnds);

    for (int i : running) {
      IPAddress kept = addressOf(ips.get(i));
      assertThat(kept.getMetadata().getDeletionTimestamp()).as("pod %d runs", i).isNull();
    }
    assertThat(Cluster.addresses(client, pool)).hasSize(ADDRESSES);
  }

  /**
   * Acceptance 6: an ADD whose names are taken (409) by another node's objects, which no watch of
   * this node shows; once they are deleted, the addresses are usable within a minute, with the same
   * daemon process.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#settle")
  void namesTakenByAnotherNodesObjectsAreUsableAgainWithinAMinuteOnceTheyGo(
      Map<String, String> settle) throws Exception {
    settle.forEach(rig.daemon::withEnv);
    rig.restart();
    Duration settleAfter = rig.daemon.settings().settleAfter();
    Map<Integer, String> ips = fill(0, 1);
    long pid = rig.daemon.pid();
    String namespace = rig.namespaces().get(1);
    List<IPAddress> foreign = new ArrayList<>();
    for (String ip : freeAddressesOfTheBlock(ips.get(0))) {
      foreign.add(client.resource(foreignAddress(namespace, ip)).create());
    }
    System.out.printf(
        "%d names taken in %s by objects of another node%n", foreign.size(), namespace);
    // Pod 1 lives in that namespace: every free address's name is taken there.
    CniCall.Outcome refused = rig.add(pool, 1);
    assertThat(refused.ok()).as(refused.stdout()).isFalse();

    Thread.sleep(settleAfter.plusSeconds(1).toMillis()); // settled as foreign by now
    for (IPAddress f : foreign) {
      client.resource(f).delete();
    }
    long deleted = System.nanoTime();
    CniCall.Outcome added = rig.addRetried(List.of(pool), 1, Duration.ofSeconds(60));
    assertThat(added.ok()).as(added.stdout()).isTrue();
    System.out.printf(
        "pod 1 got %s %.1f s after the other node's objects were deleted%n",
        added.ip(), (System.nanoTime() - deleted) / 1e9);
    assertThat(rig.daemon.pid()).as("no restart").isEqualTo(pid);
  }

  /**
   * Upgrade: IPAddresses written before kipam.io/attachment existed (no finalizer, a static pod's
   * owned by its mirror Pod) get the finalizer, and the static pod's its Node as holder, from their
   * daemon when it starts; then they behave as new ones do.
   */
  @Test
  void addressesWrittenBeforeTheFinalizerGetItFromTheirDaemonAtStart() throws Exception {
    Map<Integer, String> ips = fill(0, 5);
    String namespace = rig.namespaces().get(random.nextInt(3));
    String staticUid = UUID.randomUUID().toString();
    String name = "static-web-" + rig.node;
    mirrorPod(namespace, name, staticUid);
    String staticIp = staticCall("ADD", namespace, name, staticUid).ip();
    Pod mirror = client.pods().inNamespace(namespace).withName(name).get();

    rig.daemon.kill();
    for (IPAddress a : Cluster.addresses(client, pool)) {
      String owner =
          a.getSpec().getIp().equals(staticIp)
              ? ",{\"op\":\"replace\",\"path\":\"/metadata/ownerReferences\",\"value\":[{"
                  + "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\""
                  + name
                  + "\",\"uid\":\""
                  + mirror.getMetadata().getUid()
                  + "\",\"blockOwnerDeletion\":false}]}"
              : "";
      client
          .resource(a)
          .patch(
              io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                  io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
              "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}" + owner + "]");
    }
    assertThat(Cluster.addresses(client, pool))
        .as("as an earlier version wrote them")
        .allMatch(a -> a.getMetadata().getFinalizers().isEmpty());
    rig.daemon.start();
    rig.daemon.awaitReady(rig.kipam, rig.statusPool());

    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              List<IPAddress> all = Cluster.addresses(client, pool);
              assertThat(all).hasSize(ips.size() + 1);
              assertThat(all)
                  .allSatisfy(
                      a ->
                          assertThat(a.getMetadata().getFinalizers())
                              .containsExactly(ApiConstants.FINALIZER_ATTACHMENT));
              assertThat(addressOf(staticIp).getMetadata().getOwnerReferences())
                  .singleElement()
                  .satisfies(o -> assertThat(o.getKind()).isEqualTo("Node"));
            });
    System.out.printf(
        "%d addresses given the finalizer at start; static pod %s/%s's %s held by its Node%n",
        ips.size() + 1, namespace, name, staticIp);

    client
        .resource(client.pods().inNamespace(namespace).withName(name).get())
        .withGracePeriod(0)
        .delete();
    await()
        .atMost(WITHIN)
        .until(() -> client.pods().inNamespace(namespace).withName(name).get() == null);
    mirrorPod(namespace, name, staticUid);
    int victim = random.nextInt(ips.size());
    client.resource(addressOf(ips.get(victim))).delete();
    awaitDeletedButKept(List.of(ips.get(victim)));
    assertThat(addressOf(staticIp).getMetadata().getDeletionTimestamp()).isNull();
  }

  // ---- helpers ----

  /** Where a SIGKILL of the daemon lands: before step {@code kill}, restarted after it. */
  private record Kill(int step) {
    static Kill drawn(boolean kill, Random random, int steps) {
      return new Kill(kill ? random.nextInt(steps) : -1);
    }

    void maybeKill(int step, NodeRig rig) throws InterruptedException {
      if (step == this.step) {
        rig.daemon.kill();
      }
    }

    /** Whether the daemon is down between the kill and the restart of {@code step}. */
    boolean downIn(int step) {
      return step == this.step;
    }

    void maybeRestart(int step, NodeRig rig) {
      if (step == this.step) {
        rig.daemon.start();
        rig.daemon.awaitReady(rig.kipam, rig.statusPool());
      }
    }

    @Override
    public String toString() {
      return step < 0 ? "no kill" : "daemon SIGKILLed at step " + step;
    }
  }

  /** ADDs pods until the pool is exhausted; their addresses by pod. */
  private Map<Integer, String> fill() {
    return fill(0, ADDRESSES);
  }

  private Map<Integer, String> fill(int from, int count) {
    Map<Integer, String> ips = new LinkedHashMap<>();
    for (int i = from; i < from + count; i++) {
      CniCall.Outcome outcome = rig.add(pool, i);
      assertThat(outcome.ok()).as("ADD of pod %d: %s", i, outcome.stdout()).isTrue();
      ips.put(i, outcome.ip());
    }
    return ips;
  }

  private int probes = 1000;

  /** A new pod's ADD finds no free address: every address is taken. */
  private void assertExhausted() {
    int i = probes++;
    while (i % 3 == deletedNamespace()) {
      i = probes++;
    }
    int probe = i;
    CniCall.Outcome outcome =
        CniCall.whileTryAgain(() -> rig.add(pool, probe), Duration.ofSeconds(30));
    assertThat(outcome.stdout()).as("probe ADD of pod %d", i).contains("\"code\":100,");
  }

  /** The namespace deleted by the first test, where no new pod can be made; -1 when none. */
  private int deletedNamespace() {
    for (int q = 0; q < 3; q++) {
      var ns = client.namespaces().withName(rig.namespaces().get(q)).get();
      if (ns == null || ns.getMetadata().getDeletionTimestamp() != null) {
        return q;
      }
    }
    return -1;
  }

  /**
   * New pods get exactly {@code expected} back, and none of them before the reuse delay had passed
   * since {@code attachmentsEnded} (a moment before their attachments ended).
   */
  private void expectHandedOutAgain(Set<String> expected, long attachmentsEnded)
      throws InterruptedException {
    Set<String> got = new HashSet<>();
    while (got.size() < expected.size()) {
      int i = probes++;
      if (i % 3 == deletedNamespace()) {
        continue;
      }
      CniCall.Outcome outcome = rig.addRetried(List.of(pool), i, WITHIN);
      assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
      double after = (System.nanoTime() - attachmentsEnded) / 1e9;
      assertThat(expected).as("the address pod %d got", i).contains(outcome.ip());
      assertThat(after)
          .as("%s handed out %.1f s after its attachment ended", outcome.ip(), after)
          .isGreaterThanOrEqualTo(REUSE_SECONDS);
      System.out.printf(
          "%s handed out again %.1f s after its attachment ended%n", outcome.ip(), after);
      got.add(outcome.ip());
    }
  }

  private IPAddress addressOf(String ip) {
    return Cluster.addresses(client, pool).stream()
        .filter(a -> a.getSpec().getIp().equals(ip))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no IPAddress holds " + ip));
  }

  /** Each address's IPAddress is being deleted, and stays, finalizer and all. */
  private void awaitDeletedButKept(List<String> ips) {
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () -> {
              for (String ip : ips) {
                assertThat(addressOf(ip).getMetadata().getDeletionTimestamp())
                    .as("%s deleted", ip)
                    .isNotNull();
              }
            });
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              for (String ip : ips) {
                assertThat(addressOf(ip).getMetadata().getFinalizers())
                    .contains(ApiConstants.FINALIZER_ATTACHMENT);
              }
            });
  }

  /**
   * {@code del} ends the attachment of {@code ip} and succeeds; the address goes, and comes back to
   * new pods only after the reuse delay.
   */
  private void delThenHandedOutAgain(String ip, Callable<CniCall.Outcome> del) throws Exception {
    long attachmentEnds = System.nanoTime();
    CniCall.Outcome outcome = del.call();
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
    awaitGone(List.of(ip));
    expectHandedOutAgain(Set.of(ip), attachmentEnds);
  }

  private void awaitGone(List<String> ips) {
    await()
        .atMost(WITHIN)
        .untilAsserted(
            () ->
                assertThat(Cluster.addresses(client, pool))
                    .extracting(a -> a.getSpec().getIp())
                    .doesNotContainAnyElementsOf(ips));
  }

  private List<Event> events(IPAddress object) {
    return client
        .v1()
        .events()
        .inNamespace(object.getMetadata().getNamespace())
        .withField("involvedObject.name", object.getMetadata().getName())
        .list()
        .getItems();
  }

  /** The mirror Pod kubelet makes for a static pod: annotated with its UID, owned by its Node. */
  private void mirrorPod(String namespace, String name, String staticUid) {
    var node = client.nodes().withName(rig.node).get();
    Pod mirror =
        Cluster.podOn(name, rig.node)
            .editMetadata()
            .withAnnotations(Map.of("kubernetes.io/config.mirror", staticUid))
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("Node")
                    .withName(rig.node)
                    .withUid(node.getMetadata().getUid())
                    .withController(true)
                    .build())
            .endMetadata()
            .build();
    client.pods().inNamespace(namespace).resource(mirror).create();
  }

  /** A CNI call for the static pod, with the static pod's own UID as the runtime passes it. */
  private CniCall.Outcome staticCall(
      String command, String namespace, String name, String staticUid) {
    return CniCall.run(
        rig.kipam,
        CniCall.env(command, "static-" + rig.node, "eth0", namespace, name, staticUid),
        Cluster.config("1.1.0", rig.daemon.socket.toString(), pool));
  }

  private void phase(Pod pod, String phase) {
    Pod fresh = Cluster.current(client, pod);
    fresh.setStatus(new PodStatusBuilder(fresh.getStatus()).withPhase(phase).build());
    client.resource(fresh).updateStatus();
  }

  /** The addresses of {@code ip}'s block that no IPAddress holds. */
  private List<String> freeAddressesOfTheBlock(String ip) {
    Set<String> held =
        Cluster.addresses(client, pool).stream()
            .map(a -> a.getSpec().getIp())
            .collect(Collectors.toSet());
    var block = rig.blockOf(pool, ip).orElseThrow();
    var layout =
        io.kipam.api.net.PoolLayout.builder().cidr(block.getSpec().getCidr()).blockSize(28).build();
    List<String> free = new ArrayList<>();
    for (var a : layout.assignable(io.kipam.api.net.Cidr.parse(block.getSpec().getCidr()))) {
      if (!held.contains(a.toString())) {
        free.add(a.toString());
      }
    }
    return free;
  }

  /** An IPAddress of another node holding {@code ip}'s name in {@code namespace}. */
  private IPAddress foreignAddress(String namespace, String ip) {
    String other = "elsewhere-" + rig.node;
    var address = io.kipam.api.net.IpAddress.parse(ip);
    var block =
        io.kipam.api.net.Cidr.parse(rig.blockOf(pool, ip).orElseThrow().getSpec().getCidr());
    return HandWrittenAddresses.of(
        HandWrittenAddresses.meta(namespace, pool, address, other, block),
        HandWrittenAddresses.spec(
            pool,
            address,
            block,
            other,
            "kipam-test",
            new PodReference("elsewhere", UUID.randomUUID().toString()),
            "elsewhere-" + ip));
  }
}
