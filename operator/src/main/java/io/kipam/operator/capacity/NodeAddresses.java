package io.kipam.operator.capacity;

import io.fabric8.kubernetes.api.model.Node;
import io.kipam.api.labels.Selector;
import io.kipam.api.labels.Selectors;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PoolGeometry;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.pool.Conditions;
import java.math.BigInteger;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How many addresses each Node may count on, per network, as the extended resources the scheduler
 * reads: the addresses the node uses plus those it can still obtain (design §5, "Capacity for the
 * scheduler"). Pure: decides from pools, blocks and Nodes as cached.
 *
 * <p>For one pool and one node its selector matches, that is every assignable address of the pool
 * except what other nodes hold: the assignable addresses of other nodes' Exclusive slots, and the
 * sub-claims other nodes hold in Shared slots. So it counts the node's own slots whole (used and
 * free), the free addresses of Shared slots, and the pool's unclaimed slots. A block being deleted
 * still counts as held until it is gone. A pool counts only while it is Ready and not being
 * deleted. The values of the pools of one network are added up and capped at {@link #CAP}.
 *
 * <p>Every Node gets {@value #DEFAULT_RESOURCE}, 0 when no pool of the default network (pools
 * without {@code spec.network}) may serve it; a network {@code n} has its own resource {@code
 * ip.kipam.io/n}, on every Node while some pool of it exists.
 */
public final class NodeAddresses {

  /** The resource of the default network. */
  public static final String DEFAULT_RESOURCE = "kipam.io/ip";

  /** The prefix of a named network's resource. */
  public static final String NETWORK_RESOURCE_PREFIX = "ip.kipam.io/";

  /**
   * The largest value published: a node runs far fewer pods, and the scheduler's counts are 64-bit
   * (an IPv6 pool has 2^64 addresses and more).
   */
  public static final long CAP = 1_000_000;

  private NodeAddresses() {}

  /** The resource name of {@code network} (null or empty: the default network). */
  public static String resourceOf(String network) {
    return network == null || network.isEmpty()
        ? DEFAULT_RESOURCE
        : NETWORK_RESOURCE_PREFIX + network;
  }

  /** Whether {@code resource} is one kipam publishes (so one it may also take away). */
  public static boolean ours(String resource) {
    return resource.equals(DEFAULT_RESOURCE) || resource.startsWith(NETWORK_RESOURCE_PREFIX);
  }

  /** For every Node (by name), the value of every resource kipam publishes now. */
  public static Map<String, Map<String, Long>> compute(
      Collection<Node> nodes, Collection<IPPool> pools, Collection<IPBlock> blocks) {
    Map<String, List<IPBlock>> blocksByPool = new HashMap<>();
    for (IPBlock block : blocks) {
      Blocks.poolOf(block)
          .ifPresent(
              p -> blocksByPool.computeIfAbsent(p, k -> new java.util.ArrayList<>()).add(block));
    }
    Map<String, Map<String, Long>> values = new TreeMap<>();
    Set<String> resources = new HashSet<>(Set.of(DEFAULT_RESOURCE));
    pools.forEach(
        p -> resources.add(resourceOf(p.getSpec() == null ? null : p.getSpec().getNetwork())));
    for (Node node : nodes) {
      Map<String, Long> zero = new TreeMap<>();
      resources.forEach(r -> zero.put(r, 0L));
      values.put(node.getMetadata().getName(), zero);
    }
    for (IPPool pool : pools) {
      Usage usage = usage(pool, blocksByPool.getOrDefault(pool.getMetadata().getName(), List.of()));
      if (usage == null) {
        continue;
      }
      String resource = resourceOf(pool.getSpec().getNetwork());
      for (Node node : nodes) {
        Map<String, String> labels = node.getMetadata().getLabels();
        if (!usage.selector.matches(labels == null ? Map.of() : labels)) {
          continue;
        }
        BigInteger value = usage.forNode(node.getMetadata().getName());
        values
            .get(node.getMetadata().getName())
            .merge(resource, capped(value), (a, b) -> Math.min(CAP, a + b));
      }
    }
    return values;
  }

  private static long capped(BigInteger value) {
    return value.min(BigInteger.valueOf(CAP)).max(BigInteger.ZERO).longValueExact();
  }

  /** What the nodes of one pool hold; null when the pool serves no node now. */
  private static Usage usage(IPPool pool, List<IPBlock> blocks) {
    if (pool.getMetadata().getDeletionTimestamp() != null || !ready(pool)) {
      return null;
    }
    PoolLayout layout;
    Selector selector;
    try {
      layout = PoolGeometry.of(pool.getSpec());
      selector = Selectors.parse(pool.getSpec().getNodeSelector(), "spec.nodeSelector");
    } catch (IllegalArgumentException e) {
      return null;
    }
    Usage usage = new Usage(layout.assignableCount(), selector);
    Set<String> exclusiveSlots = new HashSet<>();
    for (IPBlock block : blocks) {
      if (!Blocks.belongsTo(block, pool) || Blocks.subClaim(block) || Blocks.shared(block)) {
        continue;
      }
      exclusiveSlots.add(block.getMetadata().getName());
      usage.hold(block.getSpec().getNode(), assignable(layout, block));
    }
    for (IPBlock block : blocks) {
      // A sub-claim under an Exclusive slot lies in addresses already counted for that slot.
      if (Blocks.belongsTo(block, pool)
          && Blocks.subClaim(block)
          && block.getSpec().getNode() != null
          && !exclusiveSlots.contains(block.getSpec().getParent())) {
        usage.hold(block.getSpec().getNode(), BigInteger.ONE);
      } else if (Blocks.belongsTo(block, pool)
          && Blocks.subClaim(block)
          && block.getSpec().getClaim() != null) {
        // An IPAMClaim's address: no node's to obtain, whichever node its pod runs on.
        usage.hold(HELD_BY_CLAIMS, BigInteger.ONE);
      }
    }
    return usage;
  }

  /** Not a node name (a Node's name is never empty): what IPAMClaims hold. */
  private static final String HELD_BY_CLAIMS = "";

  private static BigInteger assignable(PoolLayout layout, IPBlock block) {
    try {
      return layout.assignableCount(Cidr.parse(block.getSpec().getCidr()));
    } catch (IllegalArgumentException e) {
      return BigInteger.ZERO; // not a block of this layout: it holds none of the pool's addresses
    }
  }

  private static boolean ready(IPPool pool) {
    return pool.getStatus() != null
        && Conditions.find(pool.getStatus().getConditions(), "Ready")
            .map(c -> Conditions.TRUE.equals(c.getStatus()))
            .orElse(false);
  }

  /** A pool's assignable addresses and how many of them each node holds. */
  private static final class Usage {
    private final BigInteger assignable;
    private final Selector selector;
    private final Map<String, BigInteger> held = new HashMap<>();
    private BigInteger heldByAll = BigInteger.ZERO;

    Usage(BigInteger assignable, Selector selector) {
      this.assignable = assignable;
      this.selector = selector;
    }

    void hold(String node, BigInteger addresses) {
      held.merge(node, addresses, BigInteger::add);
      heldByAll = heldByAll.add(addresses);
    }

    /** Everything but what other nodes hold. */
    BigInteger forNode(String node) {
      return assignable.subtract(heldByAll.subtract(held.getOrDefault(node, BigInteger.ZERO)));
    }
  }
}
