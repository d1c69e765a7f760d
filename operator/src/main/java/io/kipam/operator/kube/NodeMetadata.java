package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import io.kipam.api.ApiConstants;
import io.kipam.operator.capacity.NodeAddresses;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Node objects as kipam-operator keeps them in its caches (design §6: Nodes as metadata): name,
 * UID, resourceVersion, creation and deletion time, labels (pool {@code nodeSelector}s), the {@code
 * kipam.io/} annotations (a daemon's recorded demand), and of the status only kipam's own resources
 * in {@code capacity} and {@code allocatable} ({@link NodeAddresses#ours}). Everything else a
 * kubelet writes (images, conditions, addresses, managed fields: most of a real Node's 10–20 KB) is
 * dropped as the object enters the cache, so the operator's memory follows the number of Nodes, not
 * their size.
 */
public final class NodeMetadata {

  private static final String KIPAM = ApiConstants.GROUP + "/";

  private NodeMetadata() {}

  /** An item store that keeps {@link #trim}med Nodes. */
  public static ItemStore<Node> store() {
    return new TransformingItemStore<>(NodeMetadata::trim);
  }

  /** What kipam-operator reads of {@code node}, and nothing else. */
  public static Node trim(Node node) {
    ObjectMeta meta = node.getMetadata();
    Node kept = new Node();
    kept.setMetadata(
        new ObjectMetaBuilder()
            .withName(meta.getName())
            .withUid(meta.getUid())
            .withResourceVersion(meta.getResourceVersion())
            .withCreationTimestamp(meta.getCreationTimestamp())
            .withDeletionTimestamp(meta.getDeletionTimestamp())
            .withLabels(meta.getLabels())
            .withAnnotations(ours(meta.getAnnotations()))
            .build());
    if (node.getStatus() != null) {
      NodeStatus status = new NodeStatus();
      status.setCapacity(resources(node.getStatus().getCapacity()));
      status.setAllocatable(resources(node.getStatus().getAllocatable()));
      kept.setStatus(status);
    }
    return kept;
  }

  /** kipam's resources ({@code kipam.io/ip}, {@code ip.kipam.io/<network>}) of a status map. */
  private static <V> Map<String, V> resources(Map<String, V> all) {
    return only(all, NodeAddresses::ours);
  }

  private static <V> Map<String, V> ours(Map<String, V> all) {
    return only(all, key -> key.startsWith(KIPAM));
  }

  private static <V> Map<String, V> only(Map<String, V> all, Predicate<String> wanted) {
    if (all == null) {
      return null;
    }
    Map<String, V> kept = new LinkedHashMap<>();
    all.forEach(
        (key, value) -> {
          if (wanted.test(key)) {
            kept.put(key, value);
          }
        });
    return kept;
  }
}
