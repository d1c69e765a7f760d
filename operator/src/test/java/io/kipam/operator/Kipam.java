package io.kipam.operator;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.node.alloc.BlockObject;
import io.kipam.node.alloc.BlockRef;
import io.kipam.node.alloc.BlockStatusStore;
import io.kipam.node.alloc.Lease;
import io.kipam.node.kube.ApiTraffic;
import io.kipam.node.kube.KubernetesBlockStatus;
import io.kipam.node.kube.KubernetesStore;
import io.kipam.runtime.client.TokenBucket;
import io.kipam.testing.Fixtures;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The cluster as operator tests need it. Pools are made as a platform team makes them. Blocks,
 * addresses, block status and release answers are written by kipam-node's own writers ({@link
 * KubernetesStore}, {@link KubernetesBlockStatus}), standing in for a daemon where the daemon is
 * not the subject of the test, so they cannot drift from what kipam-node writes. The few writes no
 * kipam-node makes stay by hand, each saying why; nothing here writes what the operator owns.
 */
public final class Kipam {

  /** The node that claims Shared slots here: kipam.io/created-by names it. */
  static final String PLAYED_NODE = "played-daemon";

  /** How often a write that found the object changed is tried again. */
  private static final int ATTEMPTS = 20;

  private final KubernetesClient client;
  private final KubernetesStore store;
  private final KubernetesBlockStatus blockStatus;

  public Kipam(KubernetesClient client) {
    this.client = client;
    // kipam-node paces its writes; a test's few need no pacing.
    TokenBucket unpaced = new TokenBucket(1_000, 1_000);
    this.store =
        new KubernetesStore(
            client,
            PLAYED_NODE,
            this::poolUid,
            unpaced,
            // No static pods are played here: no address is held by a Node.
            () -> null,
            new ApiTraffic(new PrometheusRegistry()));
    this.blockStatus = new KubernetesBlockStatus(client, unpaced);
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

  /** A pool on a network of its own, with one block of it claimed by a node. */
  record PoolWithBlock(IPPool pool, String network, IPBlock block) {
    String poolName() {
      return pool.getMetadata().getName();
    }

    String blockName() {
      return block.getMetadata().getName();
    }
  }

  /**
   * A pool named {@code prefix}-... of {@code cidr} in blocks of /28 on a network of its own, and
   * its block {@code blockCidr} claimed by {@code node}.
   */
  PoolWithBlock poolWithBlock(String prefix, String cidr, String blockCidr, String node) {
    String network = Fixtures.uniqueName("net");
    IPPool pool = createPool(Fixtures.uniqueName(prefix), cidr, 28, network);
    return new PoolWithBlock(pool, network, claimBlock(pool, blockCidr, node));
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

  /** The UID of a pool, as kipam-node's pool cache gives it its store; null when there is none. */
  private String poolUid(String name) {
    IPPool pool = pool(name);
    return pool == null ? null : pool.getMetadata().getUid();
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
   * Claims a block with kipam-node's {@link KubernetesStore#claimBlock}: named after pool and CIDR,
   * labelled, owned by the pool, protected by {@code kipam.io/block-protection}. A name already
   * taken is the 409 the API server gave kipam-node's create.
   */
  IPBlock claimBlock(IPPool pool, String cidr, String node) {
    String name = pool.getMetadata().getName();
    Cidr block = Cidr.parse(cidr);
    return claimed(name, block, store.claimBlock(name, block, node));
  }

  /**
   * A block claimed for {@code node} whose daemon has reported {@code allocated} addresses in it.
   */
  IPBlock claimReported(IPPool pool, String cidr, String node, long allocated) {
    IPBlock block = claimBlock(pool, cidr, node);
    reportAllocated(block.getMetadata().getName(), allocated);
    return block;
  }

  /**
   * Claims a slot Shared from birth with kipam-node's {@link KubernetesStore#claimSharedSlot}: no
   * node, created by {@value #PLAYED_NODE}, then {@code mode: Shared}.
   */
  IPBlock claimSharedSlot(IPPool pool, String cidr) {
    String name = pool.getMetadata().getName();
    Cidr slot = Cidr.parse(cidr);
    return claimed(name, slot, store.claimSharedSlot(name, slot));
  }

  /**
   * A sub-claim of {@code address} in {@code slot} for {@code node}, made with kipam-node's {@link
   * KubernetesStore#claimSubClaim}.
   */
  IPBlock subClaim(IPPool pool, IPBlock slot, String address, String node) {
    String name = pool.getMetadata().getName();
    IpAddress ip = IpAddress.parse(address);
    String uid = store.claimSubClaim(name, ip, node, Cidr.parse(slot.getSpec().getCidr()));
    return claimed(name, Cidr.of(ip, ip.family().bits()), uid);
  }

  /** The block a claim created; the 409 of the create when it lost ({@code uid} null). */
  private IPBlock claimed(String pool, Cidr cidr, String uid) {
    String name = ResourceNames.blockName(pool, cidr);
    if (uid == null) {
      throw new KubernetesClientException("IPBlock " + name + " is taken", 409, null);
    }
    return block(name);
  }

  IPBlock block(String name) {
    return client.resources(IPBlock.class).withName(name).get();
  }

  /**
   * Rewrites a block's status by hand, retrying conflicts with other writers. Kept by hand on
   * purpose: tests use it to write what no kipam-node writes (an earlier leader's round, a Ready
   * without a round), which {@link KubernetesBlockStatus} cannot express.
   */
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
        if (e.getCode() != 409 || attempt > ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /**
   * The daemon's coalesced report of how many addresses of the block are allocated, written with
   * kipam-node's {@link KubernetesBlockStatus#writeAllocated}; seen again when the block changed
   * before it landed.
   */
  void reportAllocated(String block, long allocated) {
    for (int attempt = 0; ; attempt++) {
      IPBlock seen = existing(block);
      if (blockStatus.writeAllocated(seen(seen), allocated)) {
        return;
      }
      if (attempt > ATTEMPTS) {
        throw new IllegalStateException("cannot report status.allocated of block " + block);
      }
    }
  }

  /**
   * The daemon's answer to the current round, written with kipam-node's {@link
   * KubernetesBlockStatus#answerRelease} as its release responder does: the round's requestedAt,
   * the state, the time in seconds, and {@code reason} only for a refusal (kipam-node gives none
   * with Ready). Decided again on the block as it is when it changed before the answer landed.
   */
  void answer(String block, ReleaseState state, String reason) {
    for (int attempt = 0; ; attempt++) {
      IPBlock current = existing(block);
      BlockRelease release = current.getStatus() == null ? null : current.getStatus().getRelease();
      if (release == null || release.getState() != ReleaseState.Requested) {
        throw new IllegalStateException("block " + block + " has no Requested round to answer");
      }
      var answer =
          new BlockStatusStore.ReleaseAnswer(
              state,
              release.getRequestedAt(),
              Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(),
              state == ReleaseState.Ready ? null : reason);
      String version =
          blockStatus.answerRelease(
              seen(current).ref(), current.getMetadata().getResourceVersion(), answer);
      if (version != null) {
        return;
      }
      if (attempt > ATTEMPTS) {
        throw new IllegalStateException("cannot answer the release round of block " + block);
      }
    }
  }

  /**
   * The daemon's answer to the round the operator asks for next: waits for {@code Requested}, then
   * answers {@code state}.
   */
  void answerWhenAsked(String block, ReleaseState state, Duration within) {
    await()
        .atMost(within)
        .until(
            () -> {
              IPBlock current = block(block);
              return current != null
                  && current.getStatus() != null
                  && current.getStatus().getRelease() != null
                  && current.getStatus().getRelease().getState() == ReleaseState.Requested;
            });
    answer(block, state, state == ReleaseState.Ready ? null : "in use");
  }

  private IPBlock existing(String name) {
    IPBlock block = block(name);
    if (block == null) {
      throw new IllegalStateException("block " + name + " does not exist");
    }
    return block;
  }

  /** The block as kipam-node's block watch shows it to its status writers. */
  private static BlockObject seen(IPBlock block) {
    BlockRef ref =
        new BlockRef(
            block.getSpec().getPool(),
            Cidr.parse(block.getSpec().getCidr()),
            block.getMetadata().getUid());
    return new BlockObject(
        ref, block.getMetadata().getResourceVersion(), block.getStatus() != null, null, null, null);
  }

  /**
   * An allocation in {@code block}, held by {@code kipam.io/attachment}, for a Pod that never
   * existed, with no owner. Kept by hand on purpose: kipam-node never writes an address without a
   * holder, and an owner that does not exist would have the garbage collector delete it at once,
   * while tests need it to stay until they {@link #delete} it (and OperatorRbacWithPlayedDaemonIT
   * counts it as the orphan of a Pod that never existed). Otherwise as kipam-node writes it.
   */
  IPAddress allocate(String namespace, IPBlock block, String ip) {
    IpAddress address = IpAddress.parse(ip);
    PodReference neverExisted =
        new PodReference(
            "pod-" + address.toString().replace(':', '-').replace('.', '-'),
            UUID.randomUUID().toString());
    return client
        .resource(
            AddressObjects.byHand(
                namespace,
                block.getSpec().getPool(),
                block.getMetadata().getName(),
                block.getSpec().getNode(),
                address,
                neverExisted,
                false))
        .create();
  }

  /**
   * An allocation of {@code ip} in {@code block} on {@code node} to {@code pod}, held by {@code
   * kipam.io/attachment}. The block and the node are names only: they need not exist. When {@code
   * owned} and {@code block} is a block name of {@code pool}, it is written with kipam-node's
   * {@link KubernetesStore#createAddress}, owned by the Pod. Otherwise by hand, because kipam-node
   * never writes it: an address without an owner (a test's orphan, or one the test deletes itself),
   * or one naming a block that is no IPBlock name of its pool.
   */
  public IPAddress allocateTo(
      String namespace,
      String pool,
      String block,
      String node,
      String ip,
      PodReference pod,
      boolean owned) {
    IpAddress address = IpAddress.parse(ip);
    Optional<Cidr> cidr = AddressObjects.blockOf(pool, block);
    if (!owned || cidr.isEmpty()) {
      return client
          .resource(AddressObjects.byHand(namespace, pool, block, node, address, pod, owned))
          .create();
    }
    Lease lease = AddressObjects.lease(namespace, pool, cidr.get(), node, address, pod);
    Lease written = store.createAddress(lease);
    if (written == null) {
      throw new KubernetesClientException(
          "IPAddress " + namespace + "/" + lease.name() + " exists", 409, null);
    }
    return client.resources(IPAddress.class).inNamespace(namespace).withName(lease.name()).get();
  }

  /** The address {@code offset} places after the first of the block. */
  static String addressIn(IPBlock block, int offset) {
    return Cidr.parse(block.getSpec().getCidr()).first().add(BigInteger.valueOf(offset)).toString();
  }

  /**
   * A release as kipam-node's DEL makes it, with its {@link KubernetesStore#deleteAddress}: the
   * delete (the object's UID as precondition), then the end of the attachment.
   */
  public void delete(IPAddress address) {
    store.deleteAddress(AddressObjects.leaseOf(address));
  }

  /**
   * Removes {@code kipam.io/attachment} from the address once it is being deleted, with
   * kipam-node's {@link KubernetesStore#endAttachment}, as its node's daemon does once the
   * attachment is over; nothing when it is gone or not being deleted.
   */
  void endAttachment(IPAddress address) {
    store.endAttachment(AddressObjects.leaseOf(address));
  }

  /**
   * A Pod of no node (there is no kubelet, and the pod garbage collector deletes Pods bound to a
   * Node that is gone), for an address to name.
   */
  public PodReference pod(String namespace, String name) {
    return podOn(namespace, name, null);
  }

  /**
   * A Pod bound to {@code node} (null: to none), as the scheduler binds one, for an address to
   * name. On a Node that does not exist, the pod garbage collector deletes it after its quarantine
   * (40 s).
   */
  public PodReference podOn(String namespace, String name, String node) {
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
                    .withNodeName(node)
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
