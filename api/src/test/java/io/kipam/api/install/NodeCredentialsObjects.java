package io.kipam.api.install;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.TestAddresses;
import io.kipam.api.v1alpha1.TestBlocks;

/**
 * The shapes of object a node's credentials meet, in one pool and namespace, each written as the
 * daemon (or kipam-operator) that owns it writes it.
 */
final class NodeCredentialsObjects {

  private final String pool;
  private final String namespace;

  NodeCredentialsObjects(String pool, String namespace) {
    this.pool = pool;
    this.namespace = namespace;
  }

  static IPPool pool(String name) {
    return Serialization.unmarshal(
        """
        apiVersion: kipam.io/v1alpha1
        kind: IPPool
        metadata:
          name: %s
        spec:
          cidr: 10.48.0.0/16
          blockSize: 28
        """
            .formatted(name),
        IPPool.class);
  }

  IPBlock subClaim(String address, String node, IPBlock parent) {
    return TestBlocks.subClaim(pool, address, node, parent.getMetadata().getName());
  }

  /** An IPAMClaim's sub-claim under {@code parent}, as kipam-node of {@code creator} makes it. */
  IPBlock claimSubClaim(String address, IPBlock parent, String creator) {
    return TestBlocks.claimSubClaim(
        pool,
        address,
        parent.getMetadata().getName(),
        namespace,
        "vm-" + address.replace('.', '-') + ".pods",
        creator);
  }

  IPAddress address(String ip, String node, String block) {
    return TestAddresses.address(pool, namespace, ip, node, block);
  }

  /**
   * The IPAMClaim {@code pod}.pods of a StatefulSet's pod on {@code node}, as kipam-node makes it,
   * owned by the StatefulSet with {@code setUid} (one that exists: the garbage collector deletes a
   * claim whose owner does not, and a case would then meet a claim that is gone).
   */
  IPAMClaim statefulSetClaim(String pod, String node, String setUid) {
    String set = pod.substring(0, pod.lastIndexOf('-'));
    IPAMClaim claim = new IPAMClaim();
    claim.setMetadata(
        new ObjectMetaBuilder()
            .withName(pod + ".pods")
            .withNamespace(namespace)
            .addToLabels(ApiConstants.LABEL_NODE, node)
            .addToLabels("kipam.io/statefulset", set)
            .addNewOwnerReference()
            .withApiVersion("apps/v1")
            .withKind("StatefulSet")
            .withName(set)
            .withUid(setUid)
            .withController(true)
            .endOwnerReference()
            .build());
    claim.setSpec(new IPAMClaimSpec("pods", "eth0"));
    return claim;
  }
}
