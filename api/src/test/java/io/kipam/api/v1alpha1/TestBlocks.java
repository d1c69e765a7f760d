package io.kipam.api.v1alpha1;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;

/** IPBlocks as kipam-node writes them, named as it names them, for tests that write them too. */
public final class TestBlocks {

  private TestBlocks() {}

  /** A slot of {@code pool}: Exclusive to {@code node}, or Shared from birth when it is null. */
  public static IPBlock slot(String pool, String cidr, String node) {
    return block(
        pool, ResourceNames.blockName(pool, Cidr.parse(cidr)), new IPBlockSpec(pool, cidr, node));
  }

  /** {@code node}'s sub-claim of {@code address} in the slot named {@code parent}. */
  public static IPBlock subClaim(String pool, String address, String node, String parent) {
    IpAddress ip = IpAddress.parse(address);
    String cidr = Cidr.of(ip, ip.family().bits()).toString();
    return block(
        pool, ResourceNames.subClaimName(pool, ip), IPBlockSpec.subClaim(pool, cidr, node, parent));
  }

  private static IPBlock block(String pool, String name, IPBlockSpec spec) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder().withName(name).addToLabels(ApiConstants.LABEL_POOL, pool).build());
    block.setSpec(spec);
    return block;
  }
}
