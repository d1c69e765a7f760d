package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.SlotModes;
import io.kipam.node.alloc.AddressKey;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.alloc.StoreUnavailableException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node daemon's watches, feeding its {@link Ledger}: IPPools, this node's Node object, this
 * node's IPBlocks and sub-claims (label {@code kipam.io/node}), the IPAddresses of this node (the
 * same label) and the Pods bound to it (field {@code spec.nodeName}). Nothing of other nodes is
 * watched (design §6): every write to any block of a pool would otherwise reach every node of the
 * pool; what a node needs of other nodes' blocks it learns from its claims' 409s and from a listing
 * when those leave an ADD without an address (see {@code BlockClaims}). The ledger is marked synced
 * only once every watch has listed its objects, so nothing is handed out before the node's own
 * allocations are known; {@link #healthy} is true only while every watch is running.
 */
public final class NodeWatch implements AutoCloseable, PoolDirectory {

  private static final Logger log = LoggerFactory.getLogger(NodeWatch.class);

  /** Annotation of a mirror pod: the UID the kubelet gave the static pod it mirrors. */
  static final String MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

  private static final Duration NAMESPACE_LABELS_TTL = Duration.ofSeconds(10);

  /**
   * Objects per page of each watch's lists. With a page size the lists are consistent reads (no
   * resourceVersion): without one, fabric8 makes an informer's first list with resourceVersion=0,
   * which the API server answers from its watch cache at any staleness, and a cache that lags (a
   * busy API server, one just restarted, one of several) would leave out the IPAddresses written
   * just before this daemon started. The node is marked synced on these lists (design 4.2).
   */
  static final long SYNC_PAGE = KubernetesStore.LIST_PAGE;

  private final KubernetesClient client;
  private final String node;
  private final Ledger ledger;
  private final PoolPolicy policy;
  private final ApiTraffic traffic;
  private final List<SharedIndexInformer<?>> informers =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Map<String, CachedLabels> namespaceLabels = new ConcurrentHashMap<>();
  private SharedIndexInformer<IPPool> pools;
  private SharedIndexInformer<PodSummary> pods;
  private SharedIndexInformer<NodeSummary> self;
  private SharedIndexInformer<IPAddress> addresses;

  /**
   * @param sharedSlots {@code KIPAM_SHARED_SLOTS}, see {@link PoolPolicy#PoolPolicy(boolean)}
   */
  public NodeWatch(
      KubernetesClient client,
      String node,
      Ledger ledger,
      boolean sharedSlots,
      ApiTraffic traffic) {
    this.client = client;
    this.node = node;
    this.ledger = ledger;
    this.policy = new PoolPolicy(sharedSlots);
    this.traffic = traffic;
  }

  /**
   * Starts every watch and waits, however long it takes, until each has listed its objects, then
   * marks the ledger synced. While the API server cannot be reached it says so in the log every
   * {@code reportEvery}.
   */
  public void start(Duration reportEvery) throws InterruptedException {
    pools =
        client
            .resources(IPPool.class)
            .withLimit(SYNC_PAGE)
            .runnableInformer(0)
            .itemStore(TrimmedStore.withoutManagedFields());
    FirstList<IPPool> poolsListed = new FirstList<>();
    pools.addEventHandler(poolsListed.track(handler("IPPool", this::poolSeen, this::poolGone)));
    self =
        client
            .resources(NodeSummary.class)
            .withName(node)
            .withLimit(SYNC_PAGE)
            .runnableInformer(0)
            .itemStore(TrimmedStore.withoutManagedFields());
    SharedIndexInformer<IPBlock> blocks =
        client
            .resources(IPBlock.class)
            .withLabel(ApiConstants.LABEL_NODE, node)
            .withLimit(SYNC_PAGE)
            .runnableInformer(0)
            .itemStore(TrimmedStore.withoutManagedFields());
    FirstList<IPBlock> blocksListed = new FirstList<>();
    blocks.addEventHandler(
        blocksListed.track(handler("IPBlock", this::ownBlockSeen, this::blockGone)));
    addresses =
        client
            .resources(IPAddress.class)
            .inAnyNamespace()
            .withLabel(ApiConstants.LABEL_NODE, node)
            .withLimit(SYNC_PAGE)
            .runnableInformer(0)
            .itemStore(TrimmedStore.withoutManagedFields());
    FirstList<IPAddress> addressesListed = new FirstList<>();
    addresses.addEventHandler(
        addressesListed.track(handler("IPAddress", this::addressSeen, this::addressGone)));
    pods =
        client
            .resources(PodSummary.class)
            .inAnyNamespace()
            .withField("spec.nodeName", node)
            .withLimit(SYNC_PAGE)
            .runnableInformer(0)
            .itemStore(TrimmedStore.withoutManagedFields());
    pods.addEventHandler(counted("Pod"));
    self.addEventHandler(counted("Node"));
    informers.addAll(List.of(pools, self, blocks, addresses, pods));
    List<CompletableFuture<?>> started = new ArrayList<>();
    for (SharedIndexInformer<?> informer : informers) {
      started.add(informer.exceptionHandler(NodeWatch::keepTrying).start().toCompletableFuture());
    }
    CompletableFuture<Void> all =
        CompletableFuture.allOf(started.toArray(CompletableFuture[]::new));
    Instant since = Instant.now();
    while (true) {
      try {
        all.get(reportEvery.toMillis(), TimeUnit.MILLISECONDS);
        break;
      } catch (java.util.concurrent.TimeoutException e) {
        log.warn(
            "still waiting for the API server at {} to list this node's allocations ({}s so far);"
                + " nothing is allocated until it has",
            client.getMasterUrl(),
            Duration.between(since, Instant.now()).toSeconds());
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException("a watch of kipam-node stopped before it synced", e);
      }
    }
    // The lists are in the watches' caches; wait until their handlers have fed them to the ledger.
    Instant listed = Instant.now();
    Instant nextReport = listed.plus(reportEvery);
    while (!poolsListed.delivered(pools)
        || !blocksListed.delivered(blocks)
        || !addressesListed.delivered(addresses)) {
      Thread.sleep(10);
      if (Instant.now().isAfter(nextReport)) {
        log.warn(
            "the watches have listed this node's allocations, but their objects have not all"
                + " reached its record after {}s; nothing is allocated until they have",
            Duration.between(listed, Instant.now()).toSeconds());
        nextReport = Instant.now().plus(reportEvery);
      }
    }
    poolsListed.finish();
    blocksListed.finish();
    addressesListed.finish();
    ledger.markSynced();
    log.info(
        "synced for node {}: {} addresses, {} blocks of this node",
        node,
        ledger.leases().size(),
        blocks.getStore().list().size());
  }

  /**
   * Whether every watch is running and connected: while one is reconnecting (or retrying an object
   * it cannot decode), this node's record may be behind the API, so the daemon reports not ready.
   */
  public boolean healthy() {
    return running() && informers.stream().allMatch(SharedIndexInformer::isWatching);
  }

  /**
   * Whether every watch is running, connected or reconnecting: a watch that has stopped for good
   * would leave this node's record behind forever, so nothing is handed out then. A reconnect alone
   * does not stop allocation: what a node may miss meanwhile (its objects deleted, other nodes'
   * claims) only makes addresses look taken, and claims collide on the API.
   */
  public boolean running() {
    return !informers.isEmpty() && informers.stream().allMatch(SharedIndexInformer::isRunning);
  }

  /**
   * The pool named {@code name} if this node may allocate from it for a pod of {@code namespace}
   * (see {@link PoolPolicy}).
   */
  @Override
  public PoolView pool(String name, String namespace) throws PoolNotUsableException {
    IPPool pool = pools.getStore().getByKey(name);
    if (pool == null) {
      throw new PoolNotUsableException("IPPool " + name + " does not exist");
    }
    NodeSummary me = self.getStore().getByKey(node);
    if (me == null) {
      // kipam-operator takes back the blocks of a deleted Node after a grace period: a daemon
      // whose Node is gone must not hand out addresses from them meanwhile.
      throw new StoreUnavailableException(
          "Node "
              + node
              + " does not exist (deleted, or not registered yet): kipam-node allocates nothing"
              + " until it is registered again",
          null);
    }
    Map<String, String> nodeLabels =
        me.getMetadata().getLabels() == null ? Map.of() : me.getMetadata().getLabels();
    return policy.usable(pool, nodeLabels, namespace, () -> namespaceLabels(namespace));
  }

  @Override
  public Optional<String> poolNetwork(String name) {
    IPPool pool = pools.getStore().getByKey(name);
    if (pool == null || pool.getSpec() == null) {
      return Optional.empty();
    }
    String network = pool.getSpec().getNetwork();
    return Optional.of(network == null ? PoolView.PRIMARY : network);
  }

  @Override
  public Optional<io.kipam.api.net.IpFamily> poolFamily(String name) {
    IPPool pool = pools.getStore().getByKey(name);
    try {
      return pool == null || pool.getSpec() == null
          ? Optional.empty()
          : Optional.of(io.kipam.api.net.Cidr.parse(pool.getSpec().getCidr()).family());
    } catch (RuntimeException unreadable) {
      return Optional.empty();
    }
  }

  /** Labels of a namespace, read from the API and kept for a few seconds. */
  private Map<String, String> namespaceLabels(String namespace) {
    return namespaceMeta(namespace).labels();
  }

  /**
   * The annotation {@code key} of namespace {@code namespace}, one of those kipam reads there
   * ({@link #NAMESPACE_ANNOTATIONS}), read with its labels and kept as long.
   */
  @Override
  public Optional<String> namespaceAnnotation(String namespace, String key) {
    return Optional.ofNullable(namespaceMeta(namespace).annotations().get(key));
  }

  /** The namespace annotations kipam reads: the pools its pods' addresses come from. */
  static final java.util.Set<String> NAMESPACE_ANNOTATIONS =
      java.util.Set.of(
          io.kipam.api.ApiConstants.ANNOTATION_POOLS,
          io.kipam.api.ApiConstants.ANNOTATION_IPV4_POOLS,
          io.kipam.api.ApiConstants.ANNOTATION_IPV6_POOLS);

  private CachedLabels namespaceMeta(String namespace) {
    CachedLabels cached = namespaceLabels.get(namespace);
    if (cached != null && cached.until().isAfter(Instant.now())) {
      return cached;
    }
    Namespace ns;
    try {
      ns = client.namespaces().withName(namespace).get();
    } catch (KubernetesClientException e) {
      throw new StoreUnavailableException("cannot read namespace " + namespace, e);
    }
    Map<String, String> labels =
        ns == null || ns.getMetadata().getLabels() == null
            ? Map.of()
            : ns.getMetadata().getLabels();
    Map<String, String> annotations = new java.util.HashMap<>();
    if (ns != null && ns.getMetadata().getAnnotations() != null) {
      ns.getMetadata().getAnnotations().entrySet().stream()
          .filter(e -> NAMESPACE_ANNOTATIONS.contains(e.getKey()))
          .forEach(e -> annotations.put(e.getKey(), e.getValue()));
    }
    if (namespaceLabels.size() > 10_000) {
      namespaceLabels.clear();
    }
    CachedLabels read =
        new CachedLabels(labels, Map.copyOf(annotations), Instant.now().plus(NAMESPACE_LABELS_TTL));
    namespaceLabels.put(namespace, read);
    return read;
  }

  /** A namespace's labels and the annotations kipam reads, until when they are kept. */
  private record CachedLabels(
      Map<String, String> labels, Map<String, String> annotations, Instant until) {}

  /** The IPPool object itself, for what the CNI result reports (gateway, routes, DNS). */
  public IPPool poolObject(String name) {
    return pools.getStore().getByKey(name);
  }

  public String poolUid(String name) {
    IPPool pool = pools.getStore().getByKey(name);
    return pool == null ? null : pool.getMetadata().getUid();
  }

  /**
   * The Pod that will own an address for {@code namespace/name}: a Pod bound to this node whose UID
   * is {@code runtimeUid} (when the runtime passed one) or, for a static pod, the mirror Pod whose
   * {@code kubernetes.io/config.mirror} annotation is that UID. Read from the node's pod watch, and
   * straight from the API when the watch has not shown it yet.
   */
  public Owner owner(String namespace, String name, Optional<String> runtimeUid)
      throws PodNotOnNodeException {
    PodSummary pod = pods.getStore().getByKey(namespace + "/" + name);
    if (pod == null || !owns(pod, runtimeUid)) {
      try {
        pod = client.resources(PodSummary.class).inNamespace(namespace).withName(name).get();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404 && e.getCode() != 403) {
          throw new StoreUnavailableException("cannot read pod " + namespace + "/" + name, e);
        }
        pod = null;
      }
    }
    if (pod == null) {
      throw new PodNotOnNodeException("pod " + namespace + "/" + name + " does not exist");
    }
    if (!node.equals(pod.nodeName())) {
      throw new PodNotOnNodeException(
          "pod "
              + namespace
              + "/"
              + name
              + " is bound to node "
              + pod.nodeName()
              + ", not to "
              + node);
    }
    if (!owns(pod, runtimeUid)) {
      throw new PodNotOnNodeException(
          "pod "
              + namespace
              + "/"
              + name
              + " has UID "
              + pod.getMetadata().getUid()
              + ", not the K8S_POD_UID "
              + runtimeUid.orElse("")
              + " the runtime passed (nor is it a mirror pod of that UID)");
    }
    return new Owner(new PodRef(namespace, name, pod.getMetadata().getUid(), mirror(pod)), pod);
  }

  /**
   * The Pod an ADD is for, as {@link #owner} read it once: its reference, and what else of it an
   * ADD reads (its annotations, its controller).
   */
  public record Owner(PodRef ref, PodSummary pod) {

    /** The annotation {@code key} of the pod; empty when it has none. */
    public Optional<String> annotation(String key) {
      Map<String, String> annotations = pod.getMetadata().getAnnotations();
      return annotations == null ? Optional.empty() : Optional.ofNullable(annotations.get(key));
    }

    /** The pod's controller owner reference (a StatefulSet's pods name it); empty when none. */
    public Optional<io.fabric8.kubernetes.api.model.OwnerReference> controller() {
      var owners = pod.getMetadata().getOwnerReferences();
      return owners == null
          ? Optional.empty()
          : owners.stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst();
    }
  }

  /** Whether {@code pod} is the mirror Pod of a static pod. */
  static boolean mirror(PodSummary pod) {
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    return annotations != null && annotations.containsKey(MIRROR_ANNOTATION);
  }

  /** This node's Node object as the node's watch last showed it; null when it does not exist. */
  public NodeSummary self() {
    return self.getStore().getByKey(node);
  }

  /** The UID of this node's Node object as the node's watch last showed it; null when absent. */
  public String selfUid() {
    NodeSummary me = self();
    return me == null ? null : me.getMetadata().getUid();
  }

  /** This node's IPAddress objects, as the node's address watch last showed them. */
  public List<IPAddress> addressObjects() {
    return addresses.getStore().list();
  }

  /** The Pod {@code namespace/name} as the node's pod watch last showed it; null when absent. */
  public PodSummary cachedPod(String namespace, String name) {
    return pods.getStore().getByKey(namespace + "/" + name);
  }

  /**
   * The Pod {@code namespace/name} read straight from the API server (a quorum read), empty when it
   * does not exist.
   */
  public Optional<PodSummary> freshPod(String namespace, String name) {
    try {
      return Optional.ofNullable(
          client.resources(PodSummary.class).inNamespace(namespace).withName(name).get());
    } catch (KubernetesClientException e) {
      throw new StoreUnavailableException("cannot read pod " + namespace + "/" + name, e);
    }
  }

  private static boolean owns(PodSummary pod, Optional<String> runtimeUid) {
    if (runtimeUid.isEmpty() || runtimeUid.get().equals(pod.getMetadata().getUid())) {
      return true;
    }
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    return annotations != null && runtimeUid.get().equals(annotations.get(MIRROR_ANNOTATION));
  }

  /**
   * One of this node's blocks, from the node's block watch: the only source of its state. It is
   * also taken for claims, and a sub-claim of this node's covers its address like anyone's.
   */
  private void ownBlockSeen(IPBlock block) {
    if (!Blocks.named(block)) {
      // Not a block kipam made: its name claims one slot, its CIDR another (design §7). Nothing
      // is handed out from it, and it stands for no slot this node would skip.
      log.warn(
          "IPBlock {} is not named for its pool and CIDR ({} of pool {}); kipam-node ignores it",
          block.getMetadata().getName(),
          block.getSpec().getCidr(),
          block.getSpec().getPool());
      return;
    }
    if (node.equals(block.getSpec().getNode())) {
      ledger.blocks().ownBlockSeen(Blocks.object(block));
    }
    blockTaken(block);
  }

  /** A block someone holds: claims skip it, and a sub-claim's address is taken for every node. */
  private void blockTaken(IPBlock block) {
    String pool = block.getSpec().getPool();
    Cidr cidr = Cidr.parse(block.getSpec().getCidr());
    String uid = block.getMetadata().getUid();
    if (block.getSpec().getParent() != null) {
      ledger.blocks().subClaimSeen(pool, cidr, uid, block.getSpec().getParent());
    } else {
      ledger
          .blocks()
          .slotSeen(
              pool,
              cidr,
              uid,
              SlotModes.shared(block),
              block.getMetadata().getDeletionTimestamp() != null);
    }
  }

  private void blockGone(IPBlock block) {
    ledger.blocks().blockGone(Blocks.ref(block));
  }

  private void poolSeen(IPPool pool) {
    ledger.poolSeen(pool.getMetadata().getName(), PoolPolicy.reuseDelay(pool.getSpec()));
  }

  private void poolGone(IPPool pool) {
    ledger.poolGone(pool.getMetadata().getName());
  }

  /**
   * An object whose content cannot be read still holds the address its name encodes; only an object
   * that tells no address at all is left out, loudly.
   */
  private void addressSeen(IPAddress address) {
    changedHere(address);
    try {
      ledger.leaseSeen(Leases.from(address));
    } catch (RuntimeException unreadable) {
      Optional<AddressKey> key = Leases.address(address);
      if (key.isPresent()) {
        ledger.unreadableSeen(key.get(), Leases.object(address));
        log.warn(
            "IPAddress {}/{} cannot be read ({}); its address {} stays taken while it exists",
            address.getMetadata().getNamespace(),
            address.getMetadata().getName(),
            unreadable.toString(),
            key.get().ip());
      } else {
        log.error(
            "IPAddress {}/{} names no address kipam can read ({}); it is ignored",
            address.getMetadata().getNamespace(),
            address.getMetadata().getName(),
            unreadable.toString());
      }
    }
  }

  private void addressGone(IPAddress address) {
    changedHere(address);
    Leases.address(address).ifPresent(key -> ledger.objectGone(key, Leases.object(address)));
  }

  /**
   * An address of this node was allocated, released or changed: a pool count taken before then may
   * not include it ({@link PoolPolicy#changed}). The objects listed at start are not changes.
   */
  private void changedHere(IPAddress address) {
    if (ledger.synced() && address.getSpec() != null && address.getSpec().getPool() != null) {
      policy.changed(address.getSpec().getPool());
    }
  }

  private <T> ResourceEventHandler<T> handler(
      String kind, java.util.function.Consumer<T> seen, java.util.function.Consumer<T> gone) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        traffic.watchEvent(kind);
        guard(() -> seen.accept(obj));
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        traffic.watchEvent(kind);
        guard(() -> seen.accept(newObj));
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        traffic.watchEvent(kind);
        guard(() -> gone.accept(obj));
      }
    };
  }

  /** Only counts the events of a watch whose objects are read from its cache when needed. */
  private <T> ResourceEventHandler<T> counted(String kind) {
    return handler(kind, object -> {}, object -> {});
  }

  /**
   * No failure ends a watch, not even before its first list or on an object that cannot be decoded:
   * the watch keeps trying (and {@link #healthy} is false while it does), so the daemon neither
   * stays up unsynced for good nor serves from a record that has stopped following the API.
   */
  private static boolean keepTrying(boolean started, Throwable t) {
    if (ExceptionHandler.isDeserializationException(t)) {
      log.error("a watch received an object it cannot decode ({}); retrying", t.toString());
    } else {
      log.warn("watch failed ({}); trying again", t.toString());
    }
    return true;
  }

  /** One malformed object must not stop the watch that delivers all the others. */
  private static void guard(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("ignoring an object kipam-node cannot read: {}", e.toString());
    }
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::close);
  }

  /** The pool cannot be allocated from; the message says why and what to do. */
  public static final class PoolNotUsableException extends Exception {
    public PoolNotUsableException(String message) {
      super(message);
    }
  }

  /** No Pod with the runtime's identity is bound to this node (yet); retrying may help. */
  public static final class PodNotOnNodeException extends Exception {
    public PodNotOnNodeException(String message) {
      super(message);
    }
  }
}
