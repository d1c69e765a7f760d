package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.SlotModes;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.HandWrittenAddresses;
import io.kipam.system.harness.InstalledIdentities;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.LoopbackWebhook;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.NodeTokens;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * kipam's admission webhook (config/webhook) in place of the two admission policies whose
 * parameters are the IPBlocks: on a control plane of the test's own, config/crd, config/rbac,
 * config/admission and config/webhook/webhook.yaml are applied as users apply them, without the two
 * policies that the webhook replaces, and the webhook's clientConfig points at the loopback port of
 * kipam-operator, which runs as its own process with its own service account's token, makes its
 * certificate in a Secret and writes the CA bundle. Three kipam-node processes with node-bound
 * tokens allocate for pods in three namespaces, through Exclusive slots, a slot Shared from birth
 * and its sub-claims, without a single refusal; writes a node's credentials forge are refused with
 * the webhook's message, among them the two no policy could refuse (a block, a parent that does not
 * exist); and while no kipam-operator answers, a node's ADD fails with "try again later" and works
 * again once it is back (failurePolicy Fail). Seeded ({@code -Dkipam.seed=N}): which node forges,
 * whose block it names, and which addresses.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AdmissionWebhookIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final String NAMESPACE = InstalledIdentities.NAMESPACE;
  private static final Map<String, String> DAEMON =
      Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1", "KIPAM_SHARED_SLOTS", "true");
  private static final int PODS = 16;

  private static final long seed =
      Long.getLong("kipam.seed", java.util.concurrent.ThreadLocalRandom.current().nextLong());
  private static final Random random = new Random(seed);
  private static ControlPlane controlPlane;
  private static KubernetesClient client;
  private static KipamProcesses processes;
  private static InstalledIdentities identities;
  private static OperatorProcess operator;
  private static final List<NodeRig> rigs = new ArrayList<>();
  private static String pool;
  private static String emptyPool;

  @BeforeAll
  static void install() throws Exception {
    System.out.println("AdmissionWebhookIT seed " + seed);
    controlPlane = ControlPlane.fresh();
    client = controlPlane.client();
    InstalledIdentities.apply(controlPlane, "crd", "rbac", "admission");
    // config/webhook without the two policies it replaces, as its kustomization leaves them out.
    controlPlane.kubectl(
        "delete",
        "validatingadmissionpolicybinding,validatingadmissionpolicy",
        "kipam-node-subclaim-parent",
        "kipam-node-address-block");
    LoopbackWebhook webhook = LoopbackWebhook.install(controlPlane, client);
    processes = new KipamProcesses(controlPlane, client, "webhook");
    identities = new InstalledIdentities(controlPlane, processes.dir);
    operator =
        identities
            .asInstalled(webhook.operatorEnv(processes.operator()))
            .startLeading(Map.of(), WITHIN);
    webhook.awaitCaBundle(client, WITHIN);
    assertThat(client.secrets().inNamespace(NAMESPACE).withName("kipam-webhook-tls").get())
        .as("the serving certificate's Secret")
        .isNotNull();
    pool = Cluster.readiedPool(client, "webhook", Cluster.spec("10.222.0.0/26", 28, 0));
    emptyPool = Cluster.readiedPool(client, "webhook-empty", Cluster.spec("10.223.0.0/26", 28, 0));
    for (int n = 0; n < 3; n++) {
      rigs.add(processes.node(pool, DAEMON, identities::node));
    }
  }

  @AfterAll
  static void stop() throws Exception {
    Close.all(processes, controlPlane);
  }

  @Test
  @Order(1)
  void everyWriteOfAnHonestDaemonIsAdmitted() throws Exception {
    for (NodeRig rig : rigs) {
      for (int i = 0; i < PODS; i++) {
        // Tried again on "try again later", as a runtime does: a node whose slots are full waits
        // for kipam-operator to make a slot Shared (design 5a). A refusal is code 11 too, but the
        // operator's log below must show none.
        CniCall.Outcome outcome = rig.addRetried(List.of(pool), i, WITHIN);
        assertThat(outcome.ok())
            .as("ADD %s/%d: %s; log %s", rig.node, i, outcome.stdout(), rig.daemon.log)
            .isTrue();
      }
    }
    List<IPAddress> held = Cluster.addresses(client, pool);
    assertThat(held).hasSize(rigs.size() * PODS);
    assertThat(held.stream().map(a -> a.getSpec().getIp()).distinct()).hasSize(held.size());
    long subClaims =
        Cluster.blocks(client, pool).stream().filter(b -> b.getSpec().getParent() != null).count();
    System.out.printf(
        "%d addresses over %d nodes, %d of them through sub-claims of a Shared slot; refused: %s%n",
        held.size(), rigs.size(), subClaims, refusals());
    assertThat(subClaims).as("sub-claims, each admitted by the webhook").isPositive();
    assertThat(refusals()).as("the webhook's refusals").isEmpty();
  }

  @Test
  @Order(2)
  void writesANodesCredentialsForgeAreRefusedWithTheWebhooksMessage() throws Exception {
    // A node's Exclusive slot (a node may hold none: slots claimed Shared from birth once fewer
    // are left than nodes), and another node that forges against it.
    List<IPBlock> exclusive =
        Cluster.blocks(client, pool).stream()
            .filter(b -> b.getSpec().getParent() == null && !SlotModes.shared(b))
            .toList();
    IPBlock victimSlot = exclusive.get(random.nextInt(exclusive.size()));
    NodeRig victim =
        rigs.stream()
            .filter(r -> r.node.equals(victimSlot.getSpec().getNode()))
            .findFirst()
            .orElseThrow();
    List<NodeRig> others = rigs.stream().filter(r -> r != victim).toList();
    NodeRig forger = others.get(random.nextInt(others.size()));
    Cidr slot = Cidr.parse(victimSlot.getSpec().getCidr());
    System.out.printf(
        "%s forges against %s's slot %s%n",
        forger.node, victim.node, victimSlot.getSpec().getCidr());
    Pod pod = forger.pod(100 + random.nextInt(100));
    try (KubernetesClient forged = NodeTokens.kipamNode(controlPlane, forger.node)) {
      refused(
          forged,
          address(pod, forger.node, pool, in(slot), slot),
          "held by node " + victim.node + " and not Shared");
      Cidr absent = Cidr.parse("10.223.0." + 16 * random.nextInt(4) + "/28");
      refused(
          forged,
          address(pod, forger.node, emptyPool, absent.network().next(), absent),
          "no such IPBlock exists");
      refused(
          forged,
          subClaim(emptyPool, absent.network().next(), forger.node, absent),
          "no such IPBlock exists");
      refused(
          forged,
          subClaim(pool, in(slot), forger.node, slot),
          "the slot is Exclusive to node " + victim.node);
    }
    assertThat(refusals()).hasSize(4);
  }

  @Test
  @Order(3)
  void whileNoOperatorAnswersANodesAddWaitsAndThenWorks() throws Exception {
    NodeRig rig = rigs.get(random.nextInt(rigs.size()));
    operator.close();
    CniCall.Outcome waiting = rig.add(pool, PODS);
    System.out.println("ADD while kipam-operator is down: " + waiting.stdout());
    assertThat(waiting.ok()).isFalse();
    assertThat(waiting.stdout()).contains("\"code\":11,");
    operator.start();
    CniCall.Outcome outcome = rig.addRetried(List.of(pool), PODS, WITHIN);
    assertThat(outcome.ok()).as(outcome.stdout()).isTrue();
  }

  private static void refused(KubernetesClient forged, Object object, String why) {
    assertThatThrownBy(
            () -> {
              if (object instanceof IPAddress a) {
                forged.resource(a).create();
              } else {
                forged.resource((IPBlock) object).create();
              }
            })
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).isEqualTo(403);
              assertThat(e.getMessage()).contains("admission webhook", why);
            });
  }

  /**
   * An address of {@code slot}, drawn: held by the victim or free, admission answers before the API
   * server looks at the name.
   */
  private static IpAddress in(Cidr slot) {
    IpAddress ip = slot.network().next();
    for (int i = random.nextInt(14); i > 0; i--) {
      ip = ip.next();
    }
    return ip;
  }

  /** An IPAddress as kipam-node writes it for {@code pod} on {@code node}, naming {@code block}. */
  private static IPAddress address(Pod pod, String node, String pool, IpAddress ip, Cidr block) {
    return HandWrittenAddresses.of(
        HandWrittenAddresses.meta(pod.getMetadata().getNamespace(), pool, ip, node, block)
            .withFinalizers(ApiConstants.FINALIZER_ATTACHMENT)
            .withOwnerReferences(Cluster.controllerReference("Pod", pod.getMetadata(), false)),
        HandWrittenAddresses.spec(
            pool,
            ip,
            block,
            node,
            "kipam",
            new io.kipam.api.v1alpha1.PodReference(
                pod.getMetadata().getName(), pod.getMetadata().getUid()),
            "forged"));
  }

  /**
   * A sub-claim of {@code ip} under {@code slot}, held by {@code node}, as kipam-node makes one.
   */
  private static IPBlock subClaim(String pool, IpAddress ip, String node, Cidr slot) {
    Cidr host = Cidr.of(ip, ip.family().bits());
    IPBlock block = new IPBlock();
    ObjectMeta meta =
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, host))
            .addToLabels(ApiConstants.LABEL_POOL, pool)
            .addToLabels(ApiConstants.LABEL_NODE, node)
            .addToLabels(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(host))
            .addToLabels(ApiConstants.LABEL_PARENT, ResourceNames.blockLabel(slot))
            .build();
    block.setMetadata(meta);
    block.setSpec(
        IPBlockSpec.subClaim(pool, host.toString(), node, ResourceNames.blockName(pool, slot)));
    return block;
  }

  /** The webhook's refusals, as kipam-operator logged them. */
  private static List<String> refusals() throws IOException {
    return Files.readAllLines(operator.log).stream().filter(l -> l.contains("refused ")).toList();
  }
}
