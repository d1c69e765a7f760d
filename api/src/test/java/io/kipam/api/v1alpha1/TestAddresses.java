package io.kipam.api.v1alpha1;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;

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
}
