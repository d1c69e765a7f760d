package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.kipam.api.labels.Selectors;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.api.v1alpha1.PoolGeometry;
import io.kipam.node.alloc.PoolView;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which pools this node may allocate from, for which pods, and with what geometry: a pool is used
 * only when kipam-operator has marked it Ready for its current generation, it is not being deleted,
 * this node matches its {@code nodeSelector} and the pod's namespace its {@code namespaceSelector}.
 * A pool's geometry is parsed once per object (UID) and generation, so a pool deleted and created
 * again under the same name is never read with the old one's layout; its status ({@code nodes},
 * {@code available}, {@code countedAt}), which changes without a new generation, is read on every
 * call. It also keeps when this node last saw one of its own addresses of each pool change ({@link
 * #changed}), which tells whether the pool's count can include it.
 */
public final class PoolPolicy {

  private static final Logger log = LoggerFactory.getLogger(PoolPolicy.class);

  private final Map<String, CachedView> views = new ConcurrentHashMap<>();
  private final Map<String, Instant> lastChange = new ConcurrentHashMap<>();
  private final boolean sharedSlots;
  private final Clock clock;

  /**
   * @param sharedSlots whether pools' {@code status.nodes} reaches the allocator, which claims a
   *     slot Shared from birth when fewer slots than that are unclaimed ({@code
   *     KIPAM_SHARED_SLOTS})
   */
  public PoolPolicy(boolean sharedSlots) {
    this(sharedSlots, Clock.systemUTC());
  }

  PoolPolicy(boolean sharedSlots, Clock clock) {
    this.sharedSlots = sharedSlots;
    this.clock = clock;
  }

  /** An address of this node in {@code pool} was allocated or released just now. */
  public void changed(String pool) {
    lastChange.put(pool, clock.instant());
  }

  /** A pool's parsed geometry, valid for exactly one object and generation. */
  private record CachedView(String uid, long generation, PoolView view) {}

  /**
   * The view of {@code pool} for an allocation to a pod of {@code namespace} on a node with {@code
   * nodeLabels}; {@code namespaceLabels} is asked only when the pool has a namespace selector.
   */
  public PoolView usable(
      IPPool pool,
      Map<String, String> nodeLabels,
      String namespace,
      Supplier<Map<String, String>> namespaceLabels)
      throws NodeWatch.PoolNotUsableException {
    String name = pool.getMetadata().getName();
    if (pool.getMetadata().getDeletionTimestamp() != null) {
      throw new NodeWatch.PoolNotUsableException("IPPool " + name + " is being deleted");
    }
    requireReady(pool);
    IPPoolSpec spec = pool.getSpec();
    requireMatch(name, "spec.nodeSelector", spec.getNodeSelector(), nodeLabels, "node");
    if (!matchesEverything(spec.getNamespaceSelector())) {
      requireMatch(
          name,
          "spec.namespaceSelector",
          spec.getNamespaceSelector(),
          namespaceLabels.get(),
          "namespace " + namespace);
    }
    String uid = pool.getMetadata().getUid();
    long generation = pool.getMetadata().getGeneration();
    CachedView cached = views.get(name);
    PoolView view;
    if (cached != null && cached.uid().equals(uid) && cached.generation() == generation) {
      view = cached.view();
    } else {
      view = view(pool);
      views.put(name, new CachedView(uid, generation, view));
    }
    // The status changes without a new generation: read it on every call.
    IPPoolStatus status = pool.getStatus();
    return view.withNodes(sharedSlots ? status.getNodes() : null)
        .withAvailable(available(name, status.getAvailable()))
        .withCount(countedAt(name, status.getCountedAt()), lastChange.get(name));
  }

  /** {@code status.countedAt} as a time; null when absent or not one. */
  private static Instant countedAt(String pool, String written) {
    if (written == null) {
      return null;
    }
    try {
      return Instant.parse(written);
    } catch (DateTimeParseException e) {
      log.warn("IPPool {} has status.countedAt {}, not a time: ignored", pool, written);
      return null;
    }
  }

  /** {@code status.available} as a number; null when absent or not one. */
  private static BigInteger available(String pool, String written) {
    if (written == null) {
      return null;
    }
    try {
      return new BigInteger(written);
    } catch (NumberFormatException e) {
      log.warn("IPPool {} has status.available {}, not a number: ignored", pool, written);
      return null;
    }
  }

  /** Whether {@code selector} selects every object, so its labels need not be read at all. */
  private static boolean matchesEverything(LabelSelector selector) {
    return selector == null
        || ((selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty())
            && (selector.getMatchExpressions() == null
                || selector.getMatchExpressions().isEmpty()));
  }

  private static void requireReady(IPPool pool) throws NodeWatch.PoolNotUsableException {
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
      throw new NodeWatch.PoolNotUsableException(
          "IPPool "
              + pool.getMetadata().getName()
              + " is not Ready"
              + (ready == null ? "" : " (" + ready.getReason() + ": " + ready.getMessage() + ")")
              + "; kipam-operator marks a pool Ready once it has checked it");
    }
  }

  private static void requireMatch(
      String pool, String field, LabelSelector selector, Map<String, String> labels, String who)
      throws NodeWatch.PoolNotUsableException {
    boolean matches;
    try {
      matches = Selectors.matches(selector, labels);
    } catch (IllegalArgumentException e) {
      throw new NodeWatch.PoolNotUsableException(
          "IPPool " + pool + " has an invalid " + field + ": " + e.getMessage());
    }
    if (!matches) {
      throw new NodeWatch.PoolNotUsableException(
          who
              + " does not match "
              + field
              + " ("
              + Selectors.describe(selector)
              + ") of IPPool "
              + pool);
    }
  }

  private PoolView view(IPPool pool) throws NodeWatch.PoolNotUsableException {
    String name = pool.getMetadata().getName();
    IPPoolSpec spec = pool.getSpec();
    PoolLayout layout;
    try {
      layout = PoolGeometry.of(spec);
    } catch (IllegalArgumentException e) {
      throw new NodeWatch.PoolNotUsableException(
          "IPPool " + name + " is invalid: " + e.getMessage());
    }
    int maxBlocks = spec.getMaxBlocksPerNode() == null ? 0 : spec.getMaxBlocksPerNode();
    return new PoolView(name, layout, reuseDelay(spec), maxBlocks).withNetwork(spec.getNetwork());
  }

  /** How long a released address of the pool rests before reuse; 30 s unless the spec says. */
  static Duration reuseDelay(IPPoolSpec spec) {
    return Duration.ofSeconds(
        spec.getReuseDelaySeconds() == null ? 30 : spec.getReuseDelaySeconds());
  }
}
