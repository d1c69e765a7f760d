package io.kipam.node.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.DemandAnnotation;
import io.kipam.runtime.client.Named;
import io.kipam.runtime.client.TokenBucket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's demand (design §5a, "demand is visible"): the pools whose ADDs on this node found no
 * address it could reach — no unclaimed slot, no free address in its own slots or in a Shared slot
 * — recorded in the annotation {@code kipam.io/demand} of this node's Node, which kipam-operator
 * watches. A node that holds no slot of a pool is otherwise invisible to the operator.
 *
 * <p>A pool is withdrawn once an ADD of it is served here, or once no ADD has found it short for
 * {@link #EXPIRES} (the runtime gave up). The annotation carries when it was recorded ({@code
 * at=}); while the node stays short it is written again every {@link #REFRESH}, so kipam-operator,
 * which ignores demand it has not seen renewed for a while, forgets the demand of a daemon that is
 * gone. Otherwise it is written only when it differs from what the node's watch shows, and at most
 * once every {@link #MIN_INTERVAL}, so the cost is paid only while a pool is short: a pool with
 * addresses to spare records nothing. The write is a merge patch of that one annotation; the node
 * admission policy lets a daemon write it on its own Node only.
 */
public final class PoolDemand {

  private static final Logger log = LoggerFactory.getLogger(PoolDemand.class);

  static final Duration MIN_INTERVAL = Duration.ofSeconds(2);
  static final Duration EXPIRES = Duration.ofSeconds(60);

  /** How often a standing demand's time is renewed (kipam-operator's bound is a few of these). */
  static final Duration REFRESH = Duration.ofSeconds(30);

  private final KubernetesClient client;
  private final String node;
  private final Clock clock;
  private final TokenBucket limiter;
  private final Map<String, Instant> shortOf = new TreeMap<>();
  private Instant lastWrite = Instant.EPOCH;

  public PoolDemand(KubernetesClient client, String node, Clock clock, TokenBucket limiter) {
    this.client = client;
    this.node = node;
    this.clock = clock;
    this.limiter = limiter;
  }

  /** An ADD of {@code pool} found no address this node can reach. */
  public synchronized void shortOf(String pool) {
    shortOf.put(pool, clock.instant());
  }

  /**
   * An ADD asked for a chosen address of {@code pool} in {@code slot}, which another node holds
   * Exclusive: kipam-operator asks that slot to become Shared.
   */
  public synchronized void shortOfSlot(String pool, String slot) {
    shortOf.put(DemandAnnotation.slot(pool, slot), clock.instant());
  }

  /** An ADD of {@code pool} was served: this node no longer needs more of it. */
  public synchronized void served(String pool) {
    shortOf.remove(pool);
    shortOf.keySet().removeIf(k -> k.startsWith(pool + "@"));
  }

  /** The pools and slots this node is short of now, as the annotation lists them (null: none). */
  synchronized String wanted() {
    return DemandAnnotation.format(entries());
  }

  /** The annotation's value, recorded now (null: none). */
  synchronized String value() {
    return DemandAnnotation.format(entries(), clock.instant());
  }

  /**
   * Whether a Node carrying {@code annotations} needs this node's demand written: it lists other
   * pools or slots, or a standing demand's time is missing or older than {@link #REFRESH}.
   */
  synchronized boolean due(Map<String, String> annotations) {
    Set<String> wanted = entries();
    Set<String> current = new TreeSet<>(DemandAnnotation.pools(annotations));
    current.addAll(DemandAnnotation.slots(annotations));
    boolean carried =
        annotations != null && annotations.get(ApiConstants.ANNOTATION_DEMAND) != null;
    if (wanted.isEmpty()) {
      return carried;
    }
    Instant now = clock.instant();
    return !wanted.equals(current)
        || DemandAnnotation.recordedAt(annotations)
            .map(at -> !now.isBefore(at.plus(REFRESH)))
            .orElse(true);
  }

  private Set<String> entries() {
    Instant horizon = clock.instant().minus(EXPIRES);
    shortOf.values().removeIf(since -> since.isBefore(horizon));
    return new TreeSet<>(shortOf.keySet());
  }

  /**
   * Writes the annotation if {@code self} (this node's Node, as its watch shows it) carries another
   * value than {@link #wanted} and the last write is long enough ago. Run in the background; a
   * failure is tried again next time.
   */
  public void write(NodeSummary self) {
    if (self == null) {
      return;
    }
    Instant now = clock.instant();
    if (!due(self.getMetadata().getAnnotations()) || now.isBefore(lastWrite.plus(MIN_INTERVAL))) {
      return;
    }
    String wanted = value();
    lastWrite = now;
    Map<String, Object> value = new HashMap<>();
    value.put(ApiConstants.ANNOTATION_DEMAND, wanted);
    try {
      limiter.acquire();
      Named.object(client, io.fabric8.kubernetes.api.model.Node.class, node)
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              Serialization.asJson(Map.of("metadata", Map.of("annotations", value))));
      log.info(
          "node {} {}",
          node,
          wanted == null ? "is short of no pool any more" : "is short of pools " + wanted);
    } catch (KubernetesClientException e) {
      log.warn("cannot record the demand of node {} ({}): {}", node, wanted, e.getMessage());
    }
  }
}
