package io.kipam.operator.capacity;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.ControllerCaches;
import io.kipam.runtime.client.Named;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@code status.capacity} and {@code status.allocatable} of kipam's resources ({@link
 * NodeAddresses}) current on every Node. It reads the controllers' caches of Nodes, pools and
 * blocks ({@link ControllerCaches}) and keeps none of its own; once every {@code interval} the
 * leader computes every Node's values (a few milliseconds for thousands of Nodes) and writes the
 * Nodes whose values differ from what their status says, one JSON merge patch of the status
 * subresource each, {@link #WRITERS} at a time. So a Node is written at most once per interval
 * however fast blocks change. A Node that carries none of kipam's resources yet (new, or registered
 * again by kubelet as a new object) is written within a second, without waiting for the interval,
 * so the scheduler can place pods that request them there (1,000 Nodes created at once: see
 * docs/benchmarks.md). A value written is not written again until the Node's cache shows something
 * else for two intervals (the cache may lag behind the write).
 */
public final class CapacityPublisher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(CapacityPublisher.class);

  private final KubernetesClient client;
  private final Duration interval;
  private final BooleanSupplier leading;
  private final OperatorMetrics metrics;
  private final Clock clock;
  private final Map<String, Written> written = new ConcurrentHashMap<>();
  private final ControllerCaches caches;
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
      ControllerCaches caches,
      Duration interval,
      BooleanSupplier leading,
      OperatorMetrics metrics,
      Clock clock) {
    this.client = client;
    this.interval = interval;
    this.leading = leading;
    this.metrics = metrics;
    this.clock = clock;
    this.caches = caches;
    loop.scheduleWithFixedDelay(this::tick, 0, 1, TimeUnit.SECONDS);
  }

  /** Nodes written at once in a pass: each write waits on the API server, not on a core. */
  static final int WRITERS = 8;

  private final ExecutorService writers =
      Executors.newFixedThreadPool(
          WRITERS,
          r -> {
            Thread t = new Thread(r, "kipam-capacity-write");
            t.setDaemon(true);
            return t;
          });

  private Instant lastPass = Instant.EPOCH;

  /**
   * Every second: a full pass when the last one is an interval old; in between, only the Nodes that
   * carry none of kipam's resources yet (new, or registered again by kubelet), so a new Node gets
   * its values within a second or two, not an interval.
   */
  private void tick() {
    Instant now = clock.instant();
    if (Duration.between(lastPass, now).compareTo(interval) >= 0) {
      if (pass(false)) {
        lastPass = now;
      }
    } else {
      pass(true);
    }
  }

  /**
   * One pass over every Node ({@code newOnly}: only Nodes without any of kipam's resources);
   * returns whether it ran. Writes go out {@link #WRITERS} at a time, and the pass ends when all
   * are done.
   */
  private boolean pass(boolean newOnly) {
    try {
      // Before the controllers' caches have synced, a pass would publish too little.
      if (!leading.getAsBoolean() || !caches.synced()) {
        return false;
      }
      List<Node> all = caches.nodes();
      List<Node> candidates =
          newOnly ? all.stream().filter(n -> ours(n, true).isEmpty()).toList() : all;
      if (candidates.isEmpty()) {
        return true;
      }
      Map<String, Map<String, Long>> values =
          NodeAddresses.compute(all, caches.pools(), caches.blocks());
      Instant now = clock.instant();
      List<Future<?>> writes = new ArrayList<>();
      for (Node node : candidates) {
        Map<String, Long> want = values.get(node.getMetadata().getName());
        if (want != null && !(newOnly && want.isEmpty())) {
          writes.add(writers.submit(() -> publish(node, want, now)));
        }
      }
      for (Future<?> write : writes) {
        write.get();
      }
      if (!newOnly) {
        written.keySet().retainAll(values.keySet());
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | RuntimeException | Error e) {
      log.warn("cannot publish kipam's resources on Nodes yet: {}", e.toString());
      return false;
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
      return; // written; a later pass looks again once the cache may show it
    }
    try {
      // Through a named object: a patch of a bare name would read the Node afresh first.
      Named.object(client, Node.class, name)
          .subresource("status")
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch(uid, wanted));
      written.put(name, new Written(uid, Map.copyOf(want), now));
      metrics.nodeCapacityWrite("written");
      log.debug("Node {}: kipam resources {}", name, want);
    } catch (KubernetesClientException e) {
      metrics.nodeCapacityWrite(e.getCode() == 404 || e.getCode() == 409 ? "gone" : "failed");
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
    writers.shutdownNow();
  }
}
