package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.PodReference;
import java.util.HashMap;
import java.util.Map;

/**
 * IPAddress objects a test writes itself (another node's, a forger's, a simulated node's), named,
 * labelled and filled in as kipam-node names, labels and fills in its own: the name of {@code ip}
 * in its pool, the pool, node and block labels, the block's name in the spec, interface {@code
 * eth0}. What kipam-node adds on top (a finalizer, an owner) the caller adds to the metadata.
 */
public final class HandWrittenAddresses {

  private HandWrittenAddresses() {}

  /** The name and labels of {@code ip}'s IPAddress in {@code namespace}, held by {@code node}. */
  public static ObjectMetaBuilder meta(
      String namespace, String pool, IpAddress ip, String node, Cidr block) {
    Map<String, String> labels = new HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, pool);
    labels.put(ApiConstants.LABEL_NODE, node);
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block));
    return new ObjectMetaBuilder()
        .withName(ResourceNames.addressName(pool, ip))
        .withNamespace(namespace)
        .withLabels(labels);
  }

  /** The spec of {@code ip} in {@code block} of {@code pool}, for {@code pod}'s {@code eth0}. */
  public static IPAddressSpec spec(
      String pool,
      IpAddress ip,
      Cidr block,
      String node,
      String network,
      PodReference pod,
      String containerId) {
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip.toString());
    spec.setPool(pool);
    spec.setBlock(ResourceNames.blockName(pool, block));
    spec.setNode(node);
    spec.setNetwork(network);
    spec.setPod(pod);
    spec.setContainerID(containerId);
    spec.setInterfaceName("eth0");
    return spec;
  }

  /** The object of {@code meta} and {@code spec}. */
  public static IPAddress of(ObjectMetaBuilder meta, IPAddressSpec spec) {
    IPAddress address = new IPAddress();
    address.setMetadata(meta.build());
    address.setSpec(spec);
    return address;
  }
}
