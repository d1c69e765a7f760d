package io.kipam.system.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.system.harness.HandWrittenAddresses;
import io.kipam.system.harness.LoopbackWebhook;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.NodeTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * What kipam's admission policies cost a node's writes as the cluster grows: with 1,000, 5,000 and
 * 20,000 slots stored (5 IPAddresses each, so 100,000 at the end; slots of 5,000 nodes), a node's
 * IPAddress create, as kipam-node makes it with its node-bound token, timed without the policies of
 * config/default (their bindings deleted), with them, and with config/webhook's set
 * (kipam-operator's admission webhook, a standby replica as its own process, in place of the two
 * policies that take the IPBlocks as parameters), on one control plane; beside it the same create
 * by an administrator, whose requests no policy is about. The address-block and sub-claim policies
 * take the IPBlocks as parameters, and kube-apiserver evaluates a policy, match conditions
 * included, once per parameter its binding selects: this is the number that grows with the cluster,
 * and it grows for every writer. Every create is one the policies admit: any refusal is counted,
 * those for CEL cost apart. Prints each stage and writes the report to {@code kipam.reportDir} as
 * {@code admission-cost.txt}. Nothing is asserted.
 */
public class AdmissionCostBenchmark {

  /** The IPBlocks stored at each stage; the last with 100,000 IPAddresses, 5 a slot. */
  private static final int[] STAGES = {1_000, 5_000, 20_000};

  private static final int SIMULATED_NODES = 5_000;
  private static final int NAMESPACES = 10;
  private static final int NODE_CREATES = 24;
  private static final int ADMIN_CREATES = 8;
  private static final int AT_ONCE = 4;

  /** How long one create may take before it counts as refused (a timeout). */
  private static final Duration PATIENCE = Duration.ofMinutes(3);

  private static final Path CONFIG =
      ControlPlaneBinaries.repositoryRoot().resolve("config/default");
  private static final String POOL = "adm";
  private static final String NODE = "adm-node";

  /** The pool's slots are /26s of 10.0.0.0/8, the i-th at 10.0.0.0 + 64 i. */
  private static Cidr slot(int i) {
    long base = (10L << 24) + 64L * i;
    return Cidr.parse(
        (base >> 24 & 255)
            + "."
            + (base >> 16 & 255)
            + "."
            + (base >> 8 & 255)
            + "."
            + (base & 255)
            + "/26");
  }

  @Test
  public void admissionCost() throws Exception {
    StringBuilder report = new StringBuilder();
    report.append(
        String.format(
            "kipam's admission policies against a node's IPAddress create, by IPBlocks stored"
                + " (5 IPAddresses a slot, slots of %,d nodes); %d creates of the node and %d of"
                + " an administrator per phase, %d at once; machine %d cores%n",
            SIMULATED_NODES,
            NODE_CREATES,
            ADMIN_CREATES,
            AT_ONCE,
            Runtime.getRuntime().availableProcessors()));
    System.out.print(report);
    try (ControlPlane controlPlane = ControlPlane.fresh()) {
      KubernetesClient admin = controlPlane.client();
      KipamCrds.install(admin);
      controlPlane.kubectl("apply", "-k", CONFIG.toString());
      admin
          .resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
          .serverSideApply();
      for (int n = 0; n < NAMESPACES; n++) {
        admin
            .resource(
                new NamespaceBuilder()
                    .withNewMetadata()
                    .withName(namespace(n))
                    .endMetadata()
                    .build())
            .serverSideApply();
      }
      // The objects are stored while the policies are not bound: with them, every IPAddress
      // create pays for every IPBlock (see the class comment), and storing 100,000 would take
      // hours.
      List<String> bindings =
          controlPlane
              .kubectl("get", "validatingadmissionpolicybindings", "-o", "name")
              .lines()
              .filter(s -> s.contains("kipam"))
              .toList();
      unbind(controlPlane, bindings);
      Webhook webhook = Webhook.start(controlPlane, admin);
      int maxSlots = STAGES[STAGES.length - 1];
      int ownSlots = STAGES.length * Admission.values().length * NODE_CREATES / 60 + 1;
      createAll(admin, ownSlots, i -> block(slot(maxSlots + i), NODE));

      Map<String, Integer> refusals = new ConcurrentHashMap<>();
      AtomicInteger celCost = new AtomicInteger();
      AtomicInteger nextOwn = new AtomicInteger();
      AtomicInteger nextAdmin = new AtomicInteger();
      Config patient =
          new ConfigBuilder(controlPlane.adminConfig())
              .withRequestTimeout((int) PATIENCE.toMillis())
              .build();
      int stored = 0;
      try (KubernetesClient node = NodeTokens.kipamNode(controlPlane, NODE, patient);
          KubernetesClient patientAdmin =
              new KubernetesClientBuilder().withConfig(patient).build()) {
        for (int slots : STAGES) {
          int from = stored;
          unbind(controlPlane, bindings); // the last stage ended with the policies bound
          webhook.active(controlPlane, false);
          long start = System.nanoTime();
          createAll(admin, slots - from, i -> block(slot(from + i), simulatedNode(from + i)));
          createAll(
              admin,
              (slots - from) * 5,
              i -> {
                int s = from + i / 5;
                return address(slot(s), i % 5 + 1, simulatedNode(s), namespace(i % NAMESPACES));
              });
          stored = slots;
          String line =
              String.format(
                  Locale.ROOT,
                  "%n%,d slots and %,d IPAddresses stored (this stage's written in %.0f s)%n",
                  slots,
                  slots * 5,
                  (System.nanoTime() - start) / 1e9);
          System.out.print(line);
          report.append(line);
          for (Admission admission : Admission.values()) {
            admission.bring(controlPlane, bindings, webhook);
            awaitAdmission(node, admission);
            for (boolean asNode : List.of(true, false)) {
              int count = asNode ? NODE_CREATES : ADMIN_CREATES;
              List<Double> times = Collections.synchronizedList(new ArrayList<>());
              Workloads.run(
                  AT_ONCE,
                  count,
                  i -> {
                    int n = (asNode ? nextOwn : nextAdmin).getAndIncrement();
                    IPAddress address =
                        asNode
                            ? address(slot(maxSlots + n / 60), n % 60 + 1, NODE, namespace(n % 10))
                            : address(slot(n), 40, simulatedNode(n), namespace(n % NAMESPACES));
                    long t = System.nanoTime();
                    try {
                      (asNode ? node : patientAdmin).resource(address).create();
                    } catch (KubernetesClientException e) {
                      String message = String.valueOf(e.getMessage());
                      if (message.contains("cost")) {
                        celCost.incrementAndGet();
                      }
                      refusals.merge("HTTP " + e.getCode() + ": " + message, 1, Integer::sum);
                    }
                    times.add((System.nanoTime() - t) / 1e6);
                  });
              line =
                  String.format(
                      Locale.ROOT,
                      "  %-14s %-13s IPAddress create: p50 %9.1f ms, p99 %9.1f ms%n",
                      admission.label,
                      asNode ? "node's" : "administrator's",
                      percentile(times, 50),
                      percentile(times, 99));
              System.out.print(line);
              report.append(line);
            }
          }
        }
      } finally {
        webhook.operator.close();
      }
      String summary =
          String.format(
              Locale.ROOT,
              "refused for CEL cost: %d; refused otherwise: %d; kube-apiserver resident at the"
                  + " end: %.0f MiB%n",
              celCost.get(),
              refusals.values().stream().mapToInt(Integer::intValue).sum() - celCost.get(),
              ProcessCpu.rssMiB(controlPlane.pids().get("kube-apiserver")));
      refusals.forEach((what, count) -> System.out.println("refused " + count + "x: " + what));
      System.out.print(summary);
      report.append(summary);
    }
    Path dir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("admission-cost.txt"), report.toString());
  }

  /** Who judges a node's IPAddress creates in a phase. */
  private enum Admission {
    NONE("without"),
    POLICIES("with policies"),
    WEBHOOK("with webhook");

    final String label;

    Admission(String label) {
      this.label = label;
    }

    /**
     * The policies of config/default bound or not, and the webhook called or not: with the webhook,
     * config/webhook's set (the two IPBlock-parameter policies left out).
     */
    void bring(ControlPlane controlPlane, List<String> bindings, Webhook webhook) {
      if (this == NONE) {
        unbind(controlPlane, bindings);
      } else {
        controlPlane.kubectl("apply", "-k", CONFIG.toString());
      }
      if (this == WEBHOOK) {
        unbind(
            controlPlane,
            bindings.stream()
                .filter(b -> b.endsWith("/" + SUBCLAIM_POLICY) || b.endsWith("/" + BLOCK_POLICY))
                .toList());
      }
      webhook.active(controlPlane, this == WEBHOOK);
    }
  }

  private static final String SUBCLAIM_POLICY = "kipam-node-subclaim-parent";
  private static final String BLOCK_POLICY = "kipam-node-address-block";

  /**
   * kipam-operator's webhook as config/webhook installs it, called at a loopback port: the operator
   * a standby (another holds its Lease, so no controller runs; every replica serves the webhook),
   * the configuration's match conditions made {@code false} while another phase runs.
   */
  private record Webhook(OperatorProcess operator, List<String> conditions) {

    static Webhook start(ControlPlane controlPlane, KubernetesClient admin) throws Exception {
      LoopbackWebhook loopback = LoopbackWebhook.install(controlPlane, admin);
      List<String> conditions =
          LoopbackWebhook.configuration(admin).getWebhooks().stream()
              .map(w -> w.getMatchConditions().get(0).getExpression())
              .toList();
      Webhook webhook = new Webhook(null, conditions);
      webhook.active(controlPlane, false);
      String lease = "kipam-operator-elsewhere";
      Path leaseFile = Files.createTempFile("kipam-lease", ".yaml");
      Files.writeString(
          leaseFile,
          String.join(
              "\n",
              "apiVersion: coordination.k8s.io/v1",
              "kind: Lease",
              "metadata: {name: " + lease + ", namespace: kipam-system}",
              "spec:",
              "  holderIdentity: another-replica",
              "  leaseDurationSeconds: 86400",
              "  renewTime: \""
                  + java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
                      .withZone(java.time.ZoneOffset.UTC)
                      .format(java.time.Instant.now())
                  + "\"",
              ""));
      controlPlane.kubectl("apply", "-f", leaseFile.toString());
      OperatorProcess operator =
          loopback
              .operatorEnv(
                  new OperatorProcess(
                      Files.createTempDirectory("kipam-admission-cost"),
                      controlPlane.adminKubeconfig(),
                      admin))
              .withEnv("KIPAM_LEASE_NAMESPACE", "kipam-system")
              .withEnv("KIPAM_LEASE_NAME", lease)
              .start();
      loopback.awaitCaBundle(admin, Duration.ofMinutes(2));
      return new Webhook(operator, conditions);
    }

    /** Makes the webhook's match conditions its own ({@code active}) or {@code false}. */
    void active(ControlPlane controlPlane, boolean active) {
      LoopbackWebhook.replaceInEach(
          controlPlane,
          conditions.size(),
          "matchConditions/0/expression",
          i ->
              io.fabric8.kubernetes.client.utils.Serialization.asJson(
                  active ? conditions.get(i) : "false"));
    }
  }

  /**
   * Waits until {@code admission} judges a node's creates: a write the policies and the webhook
   * refuse — an IPAddress naming another node's slot in its block label — is refused by the one in
   * force (admitted without), as a dry run. The address-block policy refuses it only once
   * kube-apiserver's cache holds the IPBlocks, its parameters.
   */
  private static void awaitAdmission(KubernetesClient node, Admission admission) {
    IPAddress foreign = address(slot(0), 7, NODE, namespace(0));
    Awaitility.await(admission.label + " in force")
        .atMost(Duration.ofMinutes(15))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              try {
                node.resource(foreign).dryRun().create();
                return admission == Admission.NONE;
              } catch (KubernetesClientException e) {
                String message = String.valueOf(e.getMessage());
                return switch (admission) {
                  case NONE -> false;
                  case POLICIES -> message.contains("may not name IPBlock");
                  case WEBHOOK ->
                      message.contains("admission webhook") && !message.contains(BLOCK_POLICY);
                };
              }
            });
  }

  private static void unbind(ControlPlane controlPlane, List<String> bindings) {
    List<String> delete = new ArrayList<>(List.of("delete", "--ignore-not-found"));
    delete.addAll(bindings);
    controlPlane.kubectl(delete.toArray(String[]::new));
  }

  /**
   * Creates {@code count} objects as the administrator, 16 at once. This is the setup, not what is
   * measured: a create that timed out is sent again, and "already exists" then means it was made.
   */
  private static void createAll(KubernetesClient admin, int count, IntFunction<HasMetadata> object)
      throws Exception {
    AtomicInteger done = new AtomicInteger();
    Workloads.run(
        16,
        count,
        i -> {
          HasMetadata o = object.apply(i);
          for (int attempt = 1; ; attempt++) {
            try {
              admin.resource(o).create();
              break;
            } catch (KubernetesClientException e) {
              if (e.getCode() == 409 && attempt > 1) {
                break;
              }
              if (e.getCode() != 0 && e.getCode() < 500 || attempt == 5) {
                throw e;
              }
            }
          }
          if (done.incrementAndGet() % 20_000 == 0) {
            System.out.printf("%,d of %,d %s created%n", done.get(), count, o.getKind());
          }
        });
  }

  private static String namespace(int n) {
    return "adm-" + n;
  }

  private static String simulatedNode(int slot) {
    return "sim-" + slot % SIMULATED_NODES;
  }

  /** A slot of the pool as kipam-node claims it: named after its CIDR, labelled, its node's. */
  private static IPBlock block(Cidr cidr, String node) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(POOL, cidr))
            .addToLabels(ApiConstants.LABEL_POOL, POOL)
            .addToLabels(ApiConstants.LABEL_NODE, node)
            .addToLabels(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(cidr))
            .build());
    block.setSpec(new IPBlockSpec(POOL, cidr.toString(), node));
    return block;
  }

  /** The {@code host}-th address of {@code slot}, as {@code node}'s kipam-node writes it. */
  private static IPAddress address(Cidr slot, int host, String node, String namespace) {
    IpAddress ip = slot.network().add(java.math.BigInteger.valueOf(host));
    return HandWrittenAddresses.of(
        HandWrittenAddresses.meta(namespace, POOL, ip, node, slot)
            .withFinalizers(ApiConstants.FINALIZER_ATTACHMENT),
        HandWrittenAddresses.spec(
            POOL,
            ip,
            slot,
            node,
            "pods",
            new PodReference(
                "web-" + ip.toString().replace('.', '-'), UUID.randomUUID().toString()),
            "containerd://" + "d".repeat(64)));
  }

  private static double percentile(List<Double> values, int p) {
    return Percentiles.of(values, p);
  }
}
