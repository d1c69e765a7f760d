package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Objects kipam-node tests need in the cluster. */
public final class Cluster {

  private Cluster() {}

  /**
   * Creates a pool and marks it Ready for its generation, as kipam-operator does once it has
   * checked the pool. Only for protocol tests that play the operator's half of the handshake
   * themselves ({@code ReleaseProtocolWithPlayedOperatorIT}); a running operator would act on the
   * answers the test provokes.
   */
  public static IPPool readyPool(KubernetesClient client, String name, IPPoolSpec spec) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(name).build());
    pool.setSpec(spec);
    IPPool created = client.resource(pool).create();
    IPPoolStatus status = new IPPoolStatus();
    status.setObservedGeneration(created.getMetadata().getGeneration());
    status.setConditions(
        List.of(
            new ConditionBuilder()
                .withType("Ready")
                .withStatus("True")
                .withReason("Checked")
                .withMessage("ready for allocation")
                .withObservedGeneration(created.getMetadata().getGeneration())
                .withLastTransitionTime(Instant.now().toString())
                .build()));
    created.setStatus(status);
    return client.resource(created).updateStatus();
  }

  /**
   * Creates a pool as an administrator does, with no status, and waits until kipam-operator (which
   * the test runs, see {@link SystemTest#withOperator}) has marked it Ready. A pool without a
   * network gets the test's ({@link io.kipam.testing.Fixtures#testNetwork}): the ITs of a module
   * share one control plane, and a pool of another test that overlaps it must not make the operator
   * refuse it, while the pools of one test may serve one interface together (dual-stack, a fallback
   * pool, a pool an annotation chooses), which kipam-node allows only within one network.
   */
  public static void poolReadiedByOperator(KubernetesClient client, String name, IPPoolSpec spec) {
    if (spec.getNetwork() == null) {
      spec.setNetwork(io.kipam.testing.Fixtures.testNetwork());
    }
    create(client, name, spec);
    awaitReadyCondition(client, name, "True");
  }

  /**
   * A pool named {@code prefix-…} with {@code spec}, as {@link #poolReadiedByOperator}; its name.
   */
  public static String readiedPool(KubernetesClient client, String prefix, IPPoolSpec spec) {
    String name = io.kipam.testing.Fixtures.uniqueName(prefix);
    poolReadiedByOperator(client, name, spec);
    return name;
  }

  /**
   * As {@link #poolReadiedByOperator}, but the pool stays on the network its spec names, the
   * default network when none: for a control plane of the test's own.
   */
  public static void poolOnItsNetworkReadiedByOperator(
      KubernetesClient client, String name, IPPoolSpec spec) {
    create(client, name, spec);
    awaitReadyCondition(client, name, "True");
  }

  /**
   * Creates a pool the running operator refuses (one that overlaps another of its network, say) and
   * waits until its {@code Ready} condition says {@code False}.
   */
  public static void poolRefusedByOperator(KubernetesClient client, String name, IPPoolSpec spec) {
    create(client, name, spec);
    awaitReadyCondition(client, name, "False");
  }

  private static void create(KubernetesClient client, String name, IPPoolSpec spec) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(name).build());
    pool.setSpec(spec);
    client.resource(pool).create();
  }

  /**
   * A pool of {@code cidr} in /28 blocks, no reuse delay, whose gateway is {@code gateway}, checked
   * and made Ready by kipam-operator; its name, {@code prefix} made unique.
   */
  public static String poolWithGateway(
      KubernetesClient client, String prefix, String cidr, String gateway) {
    String name = io.kipam.testing.Fixtures.uniqueName(prefix);
    IPPoolSpec spec = spec(cidr, 28, 0);
    spec.setGateway(gateway);
    poolReadiedByOperator(client, name, spec);
    return name;
  }

  /** Waits until the pool {@code name} is Ready. */
  public static void awaitReady(KubernetesClient client, String name) {
    awaitReadyCondition(client, name, "True");
  }

  private static void awaitReadyCondition(KubernetesClient client, String name, String status) {
    org.awaitility.Awaitility.await()
        .alias("pool " + name + " Ready=" + status)
        .atMost(java.time.Duration.ofSeconds(90))
        .until(
            () -> {
              IPPool p = client.resources(IPPool.class).withName(name).get();
              return p != null
                  && p.getStatus() != null
                  && p.getStatus().getConditions().stream()
                      .anyMatch(c -> "Ready".equals(c.getType()) && status.equals(c.getStatus()));
            });
  }

  /** Every IPBlock of {@code pool}: slots, sub-claims, of every node. */
  public static List<io.kipam.api.v1alpha1.IPBlock> blocks(KubernetesClient client, String pool) {
    return client
        .resources(io.kipam.api.v1alpha1.IPBlock.class)
        .withLabel(io.kipam.api.ApiConstants.LABEL_POOL, pool)
        .list()
        .getItems();
  }

  /** Every IPAddress of {@code pool}, in every namespace. */
  public static List<io.kipam.api.v1alpha1.IPAddress> addresses(
      KubernetesClient client, String pool) {
    return client
        .resources(io.kipam.api.v1alpha1.IPAddress.class)
        .inAnyNamespace()
        .withLabel(io.kipam.api.ApiConstants.LABEL_POOL, pool)
        .list()
        .getItems();
  }

  /** The IPAddresses that name {@code pod} as their holder, in the pod's namespace. */
  public static List<IPAddress> addressesOf(KubernetesClient client, Pod pod) {
    return addressesOf(client, pod.getMetadata().getNamespace(), pod.getMetadata().getName());
  }

  /** The IPAddresses in {@code namespace} that name the pod {@code pod} as their holder. */
  public static List<IPAddress> addressesOf(KubernetesClient client, String namespace, String pod) {
    List<IPAddress> inNamespace =
        client.resources(IPAddress.class).inNamespace(namespace).list().getItems();
    return inNamespace.stream().filter(a -> pod.equals(a.getSpec().getPod().getName())).toList();
  }

  /** The sub-claim of {@code pool} that holds exactly {@code ip}, if there is one. */
  public static Optional<IPBlock> subClaimOf(KubernetesClient client, String pool, String ip) {
    IpAddress address = IpAddress.parse(ip);
    Cidr single = Cidr.of(address, address.family().bits());
    return Optional.ofNullable(
        client.resources(IPBlock.class).withName(ResourceNames.blockName(pool, single)).get());
  }

  /**
   * Whether {@code block} lets {@code node} hold {@code ip}: an Exclusive slot of that node, or a
   * sub-claim of that node of exactly that address (also an address of a slot the node converted,
   * whose IPAddress still names the slot).
   */
  public static boolean holds(
      io.kipam.api.v1alpha1.IPBlock block, io.kipam.api.net.IpAddress ip, String node) {
    io.kipam.api.net.Cidr cidr = io.kipam.api.net.Cidr.parse(block.getSpec().getCidr());
    if (!cidr.contains(ip) || !node.equals(block.getSpec().getNode())) {
      return false;
    }
    if (block.getSpec().getParent() != null) {
      return cidr.prefixLength() == 32;
    }
    return block.getStatus() == null
        || block.getStatus().getMode() != io.kipam.api.v1alpha1.BlockMode.Shared;
  }

  public static IPPoolSpec spec(String cidr, int blockSize, int reuseDelaySeconds) {
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr(cidr);
    spec.setBlockSize(blockSize);
    spec.setReuseDelaySeconds(reuseDelaySeconds);
    return spec;
  }

  /**
   * A pool spec in host-prefix mode (/32 blocks) of {@code cidr} whose range is {@code address}
   * alone.
   */
  public static IPPoolSpec oneAddressSpec(String cidr, String address, int reuseDelaySeconds) {
    IPPoolSpec spec = spec(cidr, 32, reuseDelaySeconds);
    spec.setRangeStart(address);
    spec.setRangeEnd(address);
    return spec;
  }

  /** A selector of a pool's {@code nodeSelector} or {@code namespaceSelector}: one label. */
  public static io.fabric8.kubernetes.api.model.LabelSelector matchLabel(String key, String value) {
    return new io.fabric8.kubernetes.api.model.LabelSelectorBuilder()
        .addToMatchLabels(key, value)
        .build();
  }

  /** {@code pod} as the API server has it now; null once it is gone. */
  public static Pod current(KubernetesClient client, Pod pod) {
    return client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .get();
  }

  /** A pod bound to {@code node}; with no kubelet it never runs, but it owns its addresses. */
  public static Pod pod(KubernetesClient client, String namespace, String name, String node) {
    return client.pods().inNamespace(namespace).resource(podOn(name, node).build()).create();
  }

  /**
   * A controller reference to the core ({@code v1}) object {@code owner} of kind {@code kind}, as
   * its controller would set it.
   */
  public static io.fabric8.kubernetes.api.model.OwnerReference controllerReference(
      String kind, io.fabric8.kubernetes.api.model.ObjectMeta owner, boolean blockOwnerDeletion) {
    return new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind(kind)
        .withName(owner.getName())
        .withUid(owner.getUid())
        .withController(true)
        .withBlockOwnerDeletion(blockOwnerDeletion)
        .build();
  }

  /** Creates the pod {@code namespace}/{@code name} on {@code node}, with {@code annotations}. */
  public static Pod annotatedPod(
      KubernetesClient client,
      String namespace,
      String name,
      String node,
      java.util.Map<String, String> annotations) {
    Pod pod = podOn(name, node).editMetadata().withAnnotations(annotations).endMetadata().build();
    return client.pods().inNamespace(namespace).resource(pod).create();
  }

  /** A Pod named {@code name} bound to {@code node}, to be given more before it is created. */
  public static PodBuilder podOn(String name, String node) {
    return io.kipam.testing.Fixtures.podOn(name, node);
  }

  public static String config(String version, String socket, String... pools) {
    StringBuilder list = new StringBuilder();
    for (String p : pools) {
      list.append(list.length() == 0 ? "" : ",").append('"').append(p).append('"');
    }
    return "{\"cniVersion\":\""
        + version
        + "\",\"name\":\"kipam-test\",\"type\":\"bridge\",\"ipam\":{\"type\":\"kipam\",\"pools\":["
        + list
        + "],\"socket\":\""
        + socket
        + "\"}}";
  }
}
