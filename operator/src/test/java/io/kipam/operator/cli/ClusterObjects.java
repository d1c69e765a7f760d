package io.kipam.operator.cli;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.PodReference;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Pools, blocks, addresses and Pods as kipam-node and kubelet-less tests write them, for the
 * plugin's tests (the operator package's own fixture is package-private there).
 */
final class ClusterObjects {

  private final KubernetesClient client;

  ClusterObjects(KubernetesClient client) {
    this.client = client;
  }

  IPPool pool(String name, String cidr, int blockSize, String network) {
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr(cidr);
    spec.setBlockSize(blockSize);
    spec.setNetwork(network);
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(name).build());
    pool.setSpec(spec);
    return client.resource(pool).create();
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
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, IpAddress.parse(ip)))
            .withNamespace(namespace)
            .withFinalizers(ApiConstants.FINALIZER_ATTACHMENT)
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, pool,
                    ApiConstants.LABEL_NODE, node,
                    ApiConstants.LABEL_NETWORK, "kipam-test"));
    if (owned) {
      meta.withOwnerReferences(owner(pod));
    }
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip);
    spec.setPool(pool);
    spec.setBlock(block);
    spec.setNode(node);
    spec.setNetwork("kipam-test");
    spec.setPod(pod);
    spec.setContainerID("container-" + UUID.randomUUID());
    spec.setInterfaceName("eth0");
    IPAddress object = new IPAddress();
    object.setMetadata(meta.build());
    object.setSpec(spec);
    return client.resource(object).create();
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
                    .addNewContainer()
                    .withName("app")
                    .withImage("registry.invalid/app:1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    return new PodReference(name, pod.getMetadata().getUid());
  }

  IPAddress current(IPAddress address) {
    return client
        .resources(IPAddress.class)
        .inNamespace(address.getMetadata().getNamespace())
        .withName(address.getMetadata().getName())
        .get();
  }

  /** Deletes the address and ends its attachment, as a DEL on its node does. */
  void release(IPAddress address) {
    var resource =
        client
            .resources(IPAddress.class)
            .inNamespace(address.getMetadata().getNamespace())
            .withName(address.getMetadata().getName());
    resource.delete();
    try {
      resource.edit(
          a -> {
            a.getMetadata().getFinalizers().remove(ApiConstants.FINALIZER_ATTACHMENT);
            return a;
          });
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
    resource.waitUntilCondition(
        java.util.Objects::isNull, 30, java.util.concurrent.TimeUnit.SECONDS);
  }
}
