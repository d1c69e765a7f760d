package io.kipam.api.v1alpha1;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** IPAddress specs as kipam-node writes them, for tests that write addresses too. */
public final class TestAddresses {

  private TestAddresses() {}

  /**
   * The spec of {@code pod}'s address {@code ip} on eth0 of network {@code pods}, from the block
   * {@code blockCidr} of {@code pool} on {@code node}, for a container ID of 64 {@code container}s.
   */
  public static IPAddressSpec spec(
      String pool, String blockCidr, String ip, String node, PodReference pod, char container) {
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip);
    spec.setPool(pool);
    spec.setBlock(ResourceNames.blockName(pool, Cidr.parse(blockCidr)));
    spec.setNode(node);
    spec.setPod(pod);
    spec.setContainerID("containerd://" + String.valueOf(container).repeat(64));
    spec.setInterfaceName("eth0");
    spec.setNetwork("pods");
    return spec;
  }

  /**
   * {@code node}'s IPAddress of {@code ip} from {@code block} of {@code pool} in {@code namespace},
   * named and labelled as its daemon names and labels it, with its finalizer.
   */
  public static IPAddress address(
      String pool, String namespace, String ip, String node, String block) {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, IpAddress.parse(ip)))
            .withNamespace(namespace)
            .addToLabels(ApiConstants.LABEL_POOL, pool)
            .addToLabels(ApiConstants.LABEL_NODE, node)
            .addToLabels(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(Cidr.parse(block)))
            .withFinalizers(new ArrayList<>(List.of(ApiConstants.FINALIZER_ATTACHMENT)))
            .build());
    PodReference pod =
        new PodReference("web-" + ip.replace('.', '-'), UUID.randomUUID().toString());
    address.setSpec(spec(pool, block, ip, node, pod, 'd'));
    return address;
  }
}
