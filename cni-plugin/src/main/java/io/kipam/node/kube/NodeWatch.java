package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.node.alloc.Attachment;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.alloc.StoreUnavailableException;
import java.time.Duration;
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
 * The node daemon's watches, feeding its {@link Ledger}: IPPools, IPBlocks, the IPAddresses of this
 * node (label {@code kipam.io/node}) and the Pods bound to it (field {@code spec.nodeName}). The
 * ledger is marked synced only once every watch has listed its objects, so nothing is handed out
 * before the node's own allocations are known.
 */
public final class NodeWatch implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(NodeWatch.class);

  private final KubernetesClient client;
  private final String node;
  private final Ledger ledger;
  private final List<SharedIndexInformer<?>> informers =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Map<String, CompletableFuture<Void>> poolBlocks = new ConcurrentHashMap<>();
  private final Map<String, CachedView> views = new ConcurrentHashMap<>();
  private SharedIndexInformer<IPPool> pools;
  private SharedIndexInformer<Pod> pods;

  public NodeWatch(KubernetesClient client, String node, Ledger ledger) {
    this.client = client;
    this.node = node;
    this.ledger = ledger;
  }

  /** Starts every watch and waits until each has listed its objects, then marks the ledger. */
  public void start(Duration timeout) throws Exception {
    pools = client.resources(IPPool.class).runnableInformer(0);
    SharedIndexInformer<IPBlock> blocks =
        client
            .resources(IPBlock.class)
            .withLabel(ApiConstants.LABEL_NODE, node)
            .runnableInformer(0);
    blocks.addEventHandler(handler(this::blockSeen, this::blockGone));
    SharedIndexInformer<IPAddress> addresses =
        client
            .resources(IPAddress.class)
            .inAnyNamespace()
            .withLabel(ApiConstants.LABEL_NODE, node)
            .runnableInformer(0);
    addresses.addEventHandler(handler(this::addressSeen, this::addressGone));
    pods = client.pods().inAnyNamespace().withField("spec.nodeName", node).runnableInformer(0);
    informers.addAll(List.of(pools, blocks, addresses, pods));
    List<CompletableFuture<?>> started = new ArrayList<>();
    for (SharedIndexInformer<?> informer : informers) {
      started.add(informer.exceptionHandler(NodeWatch::keepTrying).start().toCompletableFuture());
    }
    CompletableFuture.allOf(started.toArray(CompletableFuture[]::new))
        .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    ledger.markSynced();
    log.info(
        "synced for node {}: {} addresses, {} blocks of this node",
        node,
        ledger.leases().size(),
        blocks.getStore().list().size());
  }

  /**
   * Watches every block of {@code pool} (not only this node's), so that claims skip blocks other
   * nodes hold instead of learning it from a 409. Started on the pool's first use, so a node
   * watches the blocks of the pools it allocates from and no others.
   */
  private void watchBlocksOf(String pool) {
    CompletableFuture<Void> listed =
        poolBlocks.computeIfAbsent(
            pool,
            p -> {
              SharedIndexInformer<IPBlock> i =
                  client
                      .resources(IPBlock.class)
                      .withLabel(ApiConstants.LABEL_POOL, p)
                      .runnableInformer(0);
              i.addEventHandler(handler(this::blockSeen, this::blockGone));
              informers.add(i);
              return i.exceptionHandler(NodeWatch::keepTrying).start().toCompletableFuture();
            });
    try {
      listed.get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while listing blocks of " + pool, e);
    } catch (java.util.concurrent.ExecutionException e) {
      // A failed first list is not cached: the next call of the pool starts a new watch.
      poolBlocks.remove(pool, listed);
      throw new StoreUnavailableException("cannot list the blocks of IPPool " + pool, e);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new StoreUnavailableException("cannot list the blocks of IPPool " + pool, e);
    }
  }

  /**
   * The pool named {@code name} if daemons may allocate from it: kipam-operator has marked it Ready
   * for its current generation and it is not being deleted.
   */
  public PoolView pool(String name) throws PoolNotUsableException {
    IPPool pool = pools.getStore().getByKey(name);
    if (pool == null) {
      throw new PoolNotUsableException("IPPool " + name + " does not exist");
    }
    if (pool.getMetadata().getDeletionTimestamp() != null) {
      throw new PoolNotUsableException("IPPool " + name + " is being deleted");
    }
    Condition ready =
        pool.getStatus() == null
            ? null
            : pool.getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType()))
                .findFirst()
                .orElse(null);
    if (ready == null
        || !"True".equals(ready.getStatus())
        || !pool.getMetadata().getGeneration().equals(pool.getStatus().getObservedGeneration())) {
      throw new PoolNotUsableException(
          "IPPool "
              + name
              + " is not Ready"
              + (ready == null ? "" : " (" + ready.getReason() + ": " + ready.getMessage() + ")")
              + "; kipam-operator marks a pool Ready once it has checked it");
    }
    watchBlocksOf(name);
    long generation = pool.getMetadata().getGeneration();
    CachedView cached = views.get(name);
    if (cached != null && cached.generation() == generation) {
      return cached.view();
    }
    PoolView view = view(pool);
    views.put(name, new CachedView(generation, view));
    return view;
  }

  /** A pool's geometry, parsed once per spec generation rather than on every ADD. */
  private record CachedView(long generation, PoolView view) {}

  private static PoolView view(IPPool pool) throws PoolNotUsableException {
    String name = pool.getMetadata().getName();
    IPPoolSpec spec = pool.getSpec();
    PoolLayout layout;
    try {
      layout =
          PoolLayout.builder()
              .cidr(spec.getCidr())
              .rangeStart(spec.getRangeStart())
              .rangeEnd(spec.getRangeEnd())
              .exclude(spec.getExclude() == null ? List.of() : spec.getExclude())
              .gateway(spec.getGateway())
              .blockSize(spec.getBlockSize())
              .build();
    } catch (IllegalArgumentException e) {
      throw new PoolNotUsableException("IPPool " + name + " is invalid: " + e.getMessage());
    }
    int reuseDelay = spec.getReuseDelaySeconds() == null ? 30 : spec.getReuseDelaySeconds();
    int maxBlocks = spec.getMaxBlocksPerNode() == null ? 0 : spec.getMaxBlocksPerNode();
    return new PoolView(name, layout, Duration.ofSeconds(reuseDelay), maxBlocks);
  }

  /** The IPPool object itself, for what the CNI result reports (gateway, routes, DNS). */
  public IPPool poolObject(String name) {
    return pools.getStore().getByKey(name);
  }

  public String poolUid(String name) {
    IPPool pool = pools.getStore().getByKey(name);
    return pool == null ? null : pool.getMetadata().getUid();
  }

  /** The UID of a pod on this node, from the watch, when the runtime did not pass K8S_POD_UID. */
  public Optional<String> podUid(String namespace, String name) {
    Pod pod = pods.getStore().getByKey(namespace + "/" + name);
    return Optional.ofNullable(pod).map(p -> p.getMetadata().getUid());
  }

  private void blockSeen(IPBlock block) {
    Cidr cidr = Cidr.parse(block.getSpec().getCidr());
    String pool = block.getSpec().getPool();
    ledger.blockSeen(pool, cidr, block.getSpec().getNode());
    boolean requested =
        block.getStatus() != null
            && block.getStatus().getRelease() != null
            && block.getStatus().getRelease().getState() == ReleaseState.Requested;
    if (node.equals(block.getSpec().getNode())) {
      ledger.drain(pool, cidr, requested);
    }
  }

  private void blockGone(IPBlock block) {
    ledger.blockGone(block.getSpec().getPool(), Cidr.parse(block.getSpec().getCidr()));
  }

  private void addressSeen(IPAddress address) {
    ledger.leaseSeen(lease(address));
  }

  private void addressGone(IPAddress address) {
    ledger.leaseGone(address.getSpec().getPool(), IpAddress.parse(address.getSpec().getIp()));
  }

  static Lease lease(IPAddress address) {
    var spec = address.getSpec();
    return new Lease(
        spec.getPool(),
        IpAddress.parse(spec.getIp()),
        ResourceNames.parseBlockName(spec.getBlock()).cidr(),
        spec.getNode(),
        new Attachment(spec.getContainerID(), spec.getInterfaceName()),
        new PodRef(
            address.getMetadata().getNamespace(), spec.getPod().getName(), spec.getPod().getUid()),
        spec.getMac(),
        address.getMetadata().getUid());
  }

  private static <T> ResourceEventHandler<T> handler(
      java.util.function.Consumer<T> seen, java.util.function.Consumer<T> gone) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        guard(() -> seen.accept(obj));
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        guard(() -> seen.accept(newObj));
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        guard(() -> gone.accept(obj));
      }
    };
  }

  /**
   * An unreachable API server must not end a watch, not even before its first list: the daemon
   * waits for the API rather than stay up forever unsynced. Only objects that cannot be read are
   * not worth another try.
   */
  private static boolean keepTrying(boolean started, Throwable t) {
    if (ExceptionHandler.isDeserializationException(t)) {
      return false;
    }
    log.warn("watch failed ({}); trying again", t.toString());
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
}
