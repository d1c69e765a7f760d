package io.kipam.operator;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The cluster as operator tests need it. Pools are made as a platform team makes them. Blocks,
 * addresses and block status are written the way kipam-node writes them (same names, labels and
 * owner references as its {@code KubernetesStore}), standing in for a daemon where the daemon is
 * not the subject of the test; nothing here writes what the operator owns.
 */
public final class Kipam {

  private static final String FINALIZER = ApiConstants.FINALIZER_ATTACHMENT;

  private final KubernetesClient client;

  public Kipam(KubernetesClient client) {
    this.client = client;
  }

  public IPPool createPool(String name, String cidr, int blockSize, String network) {
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr(cidr);
    spec.setBlockSize(blockSize);
    spec.setNetwork(network);
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(name).build());
    pool.setSpec(spec);
    return client.resource(pool).create();
  }

  /** A pool of blocks of /28 on a network of its own, once the operator has checked it Ready. */
  IPPool checkedPool(String name, String cidr, Duration within) {
    createPool(name, cidr, 28, Fixtures.uniqueName("net"));
    await().atMost(within).until(() -> conditionOf(name, "Ready").equals("True/Checked"));
    return pool(name);
  }

  IPPool pool(String name) {
    return client.resources(IPPool.class).withName(name).get();
  }

  /** Condition {@code type} of {@code pool}; an AssertionError while the pool has none. */
  Condition requiredCondition(String pool, String type) {
    return condition(pool, type)
        .orElseThrow(() -> new AssertionError("no " + type + " condition yet"));
  }

  /** {@code address} as the API server holds it now; null once it is gone. */
  public IPAddress current(IPAddress address) {
    return client
        .resources(IPAddress.class)
        .inNamespace(address.getMetadata().getNamespace())
        .withName(address.getMetadata().getName())
        .get();
  }

  Optional<Condition> condition(String pool, String type) {
    IPPool found = pool(pool);
    if (found == null || found.getStatus() == null) {
      return Optional.empty();
    }
    return found.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst();
  }

  /** "Status/Reason" of a pool's condition, or "none". */
  String conditionOf(String pool, String type) {
    return condition(pool, type).map(c -> c.getStatus() + "/" + c.getReason()).orElse("none");
  }

  /**
   * Claims a block as kipam-node does: named after pool and CIDR, labelled, owned by the pool,
   * protected by {@code kipam.io/block-protection}.
   */
  IPBlock claimBlock(IPPool pool, String cidr, String node) {
    return claim(pool, cidr, node, null);
  }

  /**
   * A block claimed for {@code node} whose daemon has reported {@code allocated} addresses in it.
   */
  IPBlock claimReported(IPPool pool, String cidr, String node, long allocated) {
    IPBlock block = claimBlock(pool, cidr, node);
    reportAllocated(block.getMetadata().getName(), allocated);
    return block;
  }

  /** Claims a slot Shared from birth, as kipam-node does: no node, then {@code mode: Shared}. */
  IPBlock claimSharedSlot(IPPool pool, String cidr) {
    IPBlock slot = claim(pool, cidr, null, null);
    editBlockStatus(slot.getMetadata().getName(), s -> s.setMode(BlockMode.Shared));
    return block(slot.getMetadata().getName());
  }

  /** A sub-claim of {@code address} in {@code slot} for {@code node}, as kipam-node makes it. */
  IPBlock subClaim(IPPool pool, IPBlock slot, String address, String node) {
    return claim(pool, address + "/32", node, slot.getMetadata().getName());
  }

  private IPBlock claim(IPPool pool, String cidr, String node, String parent) {
    String poolName = pool.getMetadata().getName();
    Cidr block = Cidr.parse(cidr);
    IPBlock object = new IPBlock();
    object.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(poolName, block))
            .withFinalizers(ApiConstants.FINALIZER_BLOCK_PROTECTION)
            .withLabels(labels(poolName, node, block))
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion(ApiConstants.API_VERSION)
                    .withKind(IPPool.KIND)
                    .withName(poolName)
                    .withUid(pool.getMetadata().getUid())
                    .withBlockOwnerDeletion(false)
                    .build())
            .build());
    object.setSpec(
        parent == null
            ? new IPBlockSpec(poolName, cidr, node)
            : IPBlockSpec.subClaim(poolName, cidr, node, parent));
    return client.resource(object).create();
  }

  private static Map<String, String> labels(String pool, String node, Cidr block) {
    Map<String, String> labels = new java.util.HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, pool);
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block));
    if (node != null) {
      labels.put(ApiConstants.LABEL_NODE, node);
    }
    return labels;
  }

  IPBlock block(String name) {
    return client.resources(IPBlock.class).withName(name).get();
  }

  /** Rewrites a block's status as its daemon would, retrying conflicts with other writers. */
  void editBlockStatus(String name, Consumer<IPBlockStatus> change) {
    for (int attempt = 0; ; attempt++) {
      IPBlock block = block(name);
      if (block.getStatus() == null) {
        block.setStatus(new IPBlockStatus());
      }
      change.accept(block.getStatus());
      try {
        client.resource(block).updateStatus();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt > 20) {
          throw e;
        }
      }
    }
  }

  /** The daemon's coalesced report of how many addresses of the block are allocated. */
  void reportAllocated(String block, long allocated) {
    editBlockStatus(block, s -> s.setAllocated(allocated));
  }

  /** The daemon's answer to the current round: the same requestedAt, its state and time. */
  void answer(String block, ReleaseState state, String reason) {
    editBlockStatus(
        block,
        s -> {
          BlockRelease release = s.getRelease();
          if (release == null || release.getState() != ReleaseState.Requested) {
            throw new IllegalStateException("block " + block + " has no Requested round to answer");
          }
          release.setState(state);
          release.setRespondedAt(Instant.now().toString());
          release.setReason(reason);
        });
  }

  /**
   * The daemon's answer to the round the operator asks for next: waits for {@code Requested}, then
   * answers {@code state}.
   */
  void answerWhenAsked(String block, ReleaseState state, java.time.Duration within) {
    org.awaitility.Awaitility.await()
        .atMost(within)
        .until(
            () -> {
              IPBlock current = block(block);
              return current != null
                  && current.getStatus() != null
                  && current.getStatus().getRelease() != null
                  && current.getStatus().getRelease().getState() == ReleaseState.Requested;
            });
    answer(block, state, state == ReleaseState.Ready ? "empty" : "in use");
  }

  /**
   * An allocation as kipam-node writes it (no owner: tests delete it themselves, with {@link
   * #delete}), held by {@code kipam.io/attachment}.
   */
  IPAddress allocate(String namespace, IPBlock block, String ip) {
    String pool = block.getSpec().getPool();
    IpAddress address = IpAddress.parse(ip);
    IPAddress object = new IPAddress();
    object.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, address))
            .withNamespace(namespace)
            .withFinalizers(FINALIZER)
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL,
                    pool,
                    ApiConstants.LABEL_NODE,
                    block.getSpec().getNode(),
                    ApiConstants.LABEL_BLOCK,
                    ResourceNames.blockLabel(Cidr.parse(block.getSpec().getCidr())),
                    ApiConstants.LABEL_NETWORK,
                    "kipam-test"))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip);
    spec.setPool(pool);
    spec.setBlock(block.getMetadata().getName());
    spec.setNode(block.getSpec().getNode());
    spec.setNetwork("kipam-test");
    spec.setPod(
        new PodReference(
            "pod-" + address.toString().replace(':', '-').replace('.', '-'),
            UUID.randomUUID().toString()));
    spec.setContainerID("container-" + UUID.randomUUID());
    spec.setInterfaceName("eth0");
    object.setSpec(spec);
    return client.resource(object).create();
  }

  /**
   * An allocation of {@code ip} in {@code block} on {@code node} to {@code pod}, as kipam-node
   * writes it, held by {@code kipam.io/attachment}; with an ownerReference to the Pod when {@code
   * owned}. The block and the node are names only: they need not exist.
   */
  public IPAddress allocateTo(
      String namespace,
      String pool,
      String block,
      String node,
      String ip,
      PodReference pod,
      boolean owned) {
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, IpAddress.parse(ip)))
            .withNamespace(namespace)
            .withFinalizers(FINALIZER)
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, pool,
                    ApiConstants.LABEL_NODE, node,
                    ApiConstants.LABEL_NETWORK, "kipam-test"));
    if (owned) {
      meta.withOwnerReferences(
          new OwnerReferenceBuilder()
              .withApiVersion("v1")
              .withKind("Pod")
              .withName(pod.getName())
              .withUid(pod.getUid())
              .withBlockOwnerDeletion(false)
              .build());
    }
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip);
    spec.setPool(pool);
    spec.setBlock(block);
    spec.setNode(node);
    spec.setNetwork("kipam-test");
    spec.setPod(pod);
    spec.setContainerID("container-" + UUID.randomUUID());
    spec.setInterfaceName("eth0");
    IPAddress object = new IPAddress();
    object.setMetadata(meta.build());
    object.setSpec(spec);
    return client.resource(object).create();
  }

  /** The address {@code offset} places after the first of the block. */
  static String addressIn(IPBlock block, int offset) {
    return Cidr.parse(block.getSpec().getCidr())
        .first()
        .add(java.math.BigInteger.valueOf(offset))
        .toString();
  }

  /** A release as kipam-node's DEL makes it: the delete, then the end of the attachment. */
  public void delete(IPAddress address) {
    client.resource(address).delete();
    endAttachment(address);
  }

  /**
   * Removes {@code kipam.io/attachment} from the address, as its node's daemon does once the
   * attachment is over; nothing when it is gone.
   */
  void endAttachment(IPAddress address) {
    var resource =
        client
            .resources(IPAddress.class)
            .inNamespace(address.getMetadata().getNamespace())
            .withName(address.getMetadata().getName());
    IPAddress fresh = resource.get();
    if (fresh == null || !fresh.getMetadata().getFinalizers().contains(FINALIZER)) {
      return;
    }
    try {
      resource.edit(
          a -> {
            a.getMetadata().getFinalizers().remove(FINALIZER);
            return a;
          });
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /**
   * A Pod of no node (there is no kubelet, and the pod garbage collector deletes Pods bound to a
   * Node that is gone), for an address to name.
   */
  public PodReference pod(String namespace, String name) {
    Pod pod =
        client
            .pods()
            .inNamespace(namespace)
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .endMetadata()
                    .withNewSpec()
                    .addNewContainer()
                    .withName("app")
                    .withImage("registry.invalid/app:1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    return new PodReference(name, pod.getMetadata().getUid());
  }

  /** The Events about {@code address}, in its namespace. */
  List<Event> events(IPAddress address) {
    return client
        .v1()
        .events()
        .inNamespace(address.getMetadata().getNamespace())
        .withField("involvedObject.name", address.getMetadata().getName())
        .list()
        .getItems();
  }

  /** Reasons of the Events kipam-operator recorded about the object named {@code name}. */
  List<Event> events(String name) {
    return client
        .v1()
        .events()
        .inNamespace("default")
        .withField("involvedObject.name", name)
        .list()
        .getItems()
        .stream()
        .filter(e -> e.getSource() != null && "kipam-operator".equals(e.getSource().getComponent()))
        .toList();
  }

  List<String> eventReasons(String name) {
    return events(name).stream().map(Event::getReason).toList();
  }
}
