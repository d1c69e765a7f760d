package io.kipam.operator.capacity;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.OperatorMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@code status.capacity} and {@code status.allocatable} of kipam's resources ({@link
 * NodeAddresses}) current on every Node. Informers on Nodes, pools and blocks mark the picture
 * changed; once every {@code interval} the leader computes every Node's values and writes the Nodes
 * whose values differ from what their status says, one JSON merge patch of the status subresource
 * each. So a Node is written at most once per interval however fast blocks change, and a Node that
 * kubelet registered again (a new object, without kipam's resources) gets its values back at the
 * next pass. A value written is not written again until the Node's cache shows something else for
 * two intervals (the cache may lag behind the write).
 */
public final class CapacityPublisher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(CapacityPublisher.class);

  private final KubernetesClient client;
  private final Duration interval;
  private final BooleanSupplier leading;
  private final OperatorMetrics metrics;
  private final Clock clock;
  private final AtomicBoolean changed = new AtomicBoolean(true);
  private final Map<String, Written> written = new ConcurrentHashMap<>();
  private final List<SharedIndexInformer<?>> informers;
  private final SharedIndexInformer<Node> nodes;
  private final SharedIndexInformer<IPPool> pools;
  private final SharedIndexInformer<IPBlock> blocks;
  private final ScheduledExecutorService loop =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kipam-capacity");
            t.setDaemon(true);
            return t;
          });

  /** What was last written to a Node object (by UID) and when. */
  private record Written(String uid, Map<String, Long> values, Instant at) {}

  public CapacityPublisher(
      KubernetesClient client,
      Duration interval,
      BooleanSupplier leading,
      OperatorMetrics metrics,
      Clock clock) {
    this.client = client;
    this.interval = interval;
    this.leading = leading;
    this.metrics = metrics;
    this.clock = clock;
    ResourceEventHandler<Object> mark = new Mark();
    this.nodes = client.nodes().inform(cast(mark));
    this.pools = client.resources(IPPool.class).inform(cast(mark));
    this.blocks = client.resources(IPBlock.class).inform(cast(mark));
    this.informers = List.of(nodes, pools, blocks);
    loop.scheduleWithFixedDelay(this::pass, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  @SuppressWarnings("unchecked")
  private static <T> ResourceEventHandler<T> cast(ResourceEventHandler<Object> handler) {
    return (ResourceEventHandler<T>) handler;
  }

  /** Any change of a Node, pool or block may change some Node's values. */
  private final class Mark implements ResourceEventHandler<Object> {
    @Override
    public void onAdd(Object obj) {
      changed.set(true);
    }

    @Override
    public void onUpdate(Object before, Object after) {
      changed.set(true);
    }

    @Override
    public void onDelete(Object obj, boolean deletedFinalStateUnknown) {
      changed.set(true);
    }
  }

  /** Whether every informer has synced (a pass before that would publish too little). */
  public boolean synced() {
    return informers.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  private void pass() {
    try {
      if (!leading.getAsBoolean() || !synced()) {
        return;
      }
      if (!changed.getAndSet(false)) {
        return;
      }
      Map<String, Map<String, Long>> values =
          NodeAddresses.compute(
              nodes.getStore().list(), pools.getStore().list(), blocks.getStore().list());
      Instant now = clock.instant();
      for (Node node : nodes.getStore().list()) {
        Map<String, Long> want = values.get(node.getMetadata().getName());
        if (want != null) {
          publish(node, want, now);
        }
      }
      written.keySet().retainAll(values.keySet());
    } catch (RuntimeException | Error e) {
      changed.set(true);
      log.warn("cannot publish kipam's resources on Nodes yet: {}", e.toString());
    }
  }

  private void publish(Node node, Map<String, Long> want, Instant now) {
    Map<String, Long> capacity = ours(node, true);
    Map<String, Long> allocatable = ours(node, false);
    Map<String, Long> wanted = new LinkedHashMap<>(want);
    // A resource of a network that has no pool any more goes away.
    capacity.keySet().stream().filter(r -> !want.containsKey(r)).forEach(r -> wanted.put(r, null));
    boolean current = want.equals(capacity) && want.equals(allocatable);
    String name = node.getMetadata().getName();
    String uid = node.getMetadata().getUid();
    if (current) {
      return;
    }
    Written last = written.get(name);
    if (last != null
        && last.uid().equals(uid)
        && last.values().equals(want)
        && Duration.between(last.at(), now).compareTo(interval.multipliedBy(2)) < 0) {
      changed.set(true); // look again once the cache may show it
      return;
    }
    try {
      client
          .nodes()
          .withName(name)
          .subresource("status")
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch(uid, wanted));
      written.put(name, new Written(uid, Map.copyOf(want), now));
      metrics.nodeCapacityWrite("written");
      log.debug("Node {}: kipam resources {}", name, want);
    } catch (KubernetesClientException e) {
      metrics.nodeCapacityWrite(e.getCode() == 404 || e.getCode() == 409 ? "gone" : "failed");
      changed.set(true);
      if (e.getCode() != 404 && e.getCode() != 409) {
        log.info("cannot write kipam resources on Node {} yet: {}", name, e.getMessage());
      }
    }
  }

  /** kipam's resources in the Node's capacity (or allocatable), as numbers. */
  private static Map<String, Long> ours(Node node, boolean capacity) {
    Map<String, Long> found = new HashMap<>();
    if (node.getStatus() == null) {
      return found;
    }
    Map<String, Quantity> values =
        capacity ? node.getStatus().getCapacity() : node.getStatus().getAllocatable();
    if (values == null) {
      return found;
    }
    values.forEach(
        (resource, quantity) -> {
          if (NodeAddresses.ours(resource)) {
            found.put(resource, Quantity.getAmountInBytes(quantity).longValue());
          }
        });
    return found;
  }

  /**
   * The merge patch: both maps, a null removing a resource; tested against the Node's UID, so a
   * Node deleted and registered again meanwhile is not written with the old object's values.
   */
  private static String patch(String uid, Map<String, Long> values) {
    StringBuilder entries = new StringBuilder();
    values.forEach(
        (resource, value) -> {
          if (entries.length() > 0) {
            entries.append(',');
          }
          entries
              .append('"')
              .append(resource)
              .append("\":")
              .append(value == null ? "null" : "\"" + value + "\"");
        });
    return "{\"metadata\":{\"uid\":\""
        + uid
        + "\"},\"status\":{\"capacity\":{"
        + entries
        + "},\"allocatable\":{"
        + entries
        + "}}}";
  }

  @Override
  public void close() {
    loop.shutdownNow();
    informers.forEach(SharedIndexInformer::close);
  }
}
