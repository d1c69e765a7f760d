package io.kipam.operator.cli;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.Kipam;
import java.util.HashMap;
import java.util.Map;

/**
 * Pools, blocks, addresses and Pods as kipam-node and kubelet-less tests write them, for the
 * plugin's tests: the operator's fixture {@link Kipam}, and blocks whose daemon reported a count.
 */
final class ClusterObjects {

  private final KubernetesClient client;
  private final Kipam kipam;

  ClusterObjects(KubernetesClient client) {
    this.client = client;
    this.kipam = new Kipam(client);
  }

  IPPool pool(String name, String cidr, int blockSize, String network) {
    return kipam.createPool(name, cidr, blockSize, network);
  }

  /** A block of {@code node} whose daemon reported {@code allocated} addresses in it. */
  IPBlock block(IPPool pool, String cidr, String node, long allocated) {
    String poolName = pool.getMetadata().getName();
    Cidr block = Cidr.parse(cidr);
    Map<String, String> labels = new HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, poolName);
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block));
    labels.put(ApiConstants.LABEL_NODE, node);
    IPBlock object = new IPBlock();
    object.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(poolName, block))
            .withLabels(labels)
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion(ApiConstants.API_VERSION)
                    .withKind(IPPool.KIND)
                    .withName(poolName)
                    .withUid(pool.getMetadata().getUid())
                    .withBlockOwnerDeletion(false)
                    .build())
            .build());
    object.setSpec(new IPBlockSpec(poolName, cidr, node));
    IPBlock created = client.resource(object).create();
    created.setStatus(new IPBlockStatus());
    created.getStatus().setAllocated(allocated);
    return client.resource(created).updateStatus();
  }

  /**
   * An allocation as kipam-node writes it, held by {@code kipam.io/attachment}; owned by the pod
   * when {@code owned}.
   */
  IPAddress address(
      String namespace,
      String pool,
      String block,
      String node,
      String ip,
      PodReference pod,
      boolean owned) {
    return kipam.allocateTo(namespace, pool, block, node, ip, pod, owned);
  }

  static io.fabric8.kubernetes.api.model.OwnerReference owner(PodReference pod) {
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind("Pod")
        .withName(pod.getName())
        .withUid(pod.getUid())
        .withBlockOwnerDeletion(false)
        .build();
  }

  /** A Pod of no node (there is no kubelet), for an address to name. */
  PodReference pod(String namespace, String name) {
    return kipam.pod(namespace, name);
  }

  /** A Pod bound to {@code node}, as the scheduler binds one. */
  PodReference podOn(String namespace, String name, String node) {
    return kipam.podOn(namespace, name, node);
  }

  IPAddress current(IPAddress address) {
    return kipam.current(address);
  }

  /** Deletes the address and ends its attachment, as a DEL on its node does. */
  void release(IPAddress address) {
    kipam.delete(address);
  }
}
