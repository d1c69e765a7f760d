package io.kipam.api.v1alpha1;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * IPBlocks as kipam-node writes them, named and labelled as it names and labels them, for tests
 * that write them too.
 */
public final class TestBlocks {

  private TestBlocks() {}

  /** A slot of {@code pool}: Exclusive to {@code node}, or Shared from birth when it is null. */
  public static IPBlock slot(String pool, String cidr, String node) {
    IPBlock slot =
        block(
            pool,
            ResourceNames.blockName(pool, Cidr.parse(cidr)),
            new IPBlockSpec(pool, cidr, node));
    slot.getMetadata()
        .getLabels()
        .put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(Cidr.parse(cidr)));
    return slot;
  }

  /** A {@link #slot} carrying kipam's protection finalizer, as kipam-node claims one. */
  public static IPBlock protectedSlot(String pool, String cidr, String node) {
    IPBlock slot = slot(pool, cidr, node);
    slot.getMetadata()
        .setFinalizers(new ArrayList<>(List.of(ApiConstants.FINALIZER_BLOCK_PROTECTION)));
    return slot;
  }

  /** A slot Shared from birth as kipam-node of {@code creator} claims it. */
  public static IPBlock sharedFromBirth(String pool, String cidr, String creator) {
    IPBlock slot = protectedSlot(pool, cidr, null);
    slot.getMetadata().getLabels().put(ApiConstants.LABEL_CREATED_BY, creator);
    return slot;
  }

  /** {@code node}'s sub-claim of {@code address} in the slot named {@code parent}. */
  public static IPBlock subClaim(String pool, String address, String node, String parent) {
    IpAddress ip = IpAddress.parse(address);
    String cidr = Cidr.of(ip, ip.family().bits()).toString();
    IPBlock subClaim =
        block(
            pool,
            ResourceNames.subClaimName(pool, ip),
            IPBlockSpec.subClaim(pool, cidr, node, parent));
    Map<String, String> labels = subClaim.getMetadata().getLabels();
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(Cidr.parse(cidr)));
    // The parent's label is its CIDR's; its name is the pool's name, a dot and that label. (Tests
    // of bad sub-claims name parents of other shapes: they go without the label.)
    if (parent != null && parent.startsWith(pool + ".")) {
      labels.put(ApiConstants.LABEL_PARENT, parent.substring(pool.length() + 1));
    }
    return subClaim;
  }

  /**
   * The sub-claim of IPAMClaim {@code namespace/claim}'s address under the slot named {@code
   * parent}, as kipam-node of {@code creator} makes it: no node, the claim's UID as its label, the
   * block finalizer; {@code creator} null leaves out the creator label.
   */
  public static IPBlock claimSubClaim(
      String pool, String address, String parent, String namespace, String claim, String creator) {
    String uid = UUID.randomUUID().toString();
    IPBlock block = subClaim(pool, address, "unused", parent);
    Map<String, String> labels = block.getMetadata().getLabels();
    labels.remove(ApiConstants.LABEL_NODE);
    labels.put(ApiConstants.LABEL_CLAIM, uid);
    if (creator != null) {
      labels.put(ApiConstants.LABEL_CREATED_BY, creator);
    }
    block
        .getMetadata()
        .setFinalizers(new ArrayList<>(List.of(ApiConstants.FINALIZER_BLOCK_PROTECTION)));
    block.setSpec(
        IPBlockSpec.claimed(
            pool, address + "/32", parent, new ClaimReference(namespace, claim, uid)));
    return block;
  }

  private static IPBlock block(String pool, String name, IPBlockSpec spec) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder().withName(name).addToLabels(ApiConstants.LABEL_POOL, pool).build());
    if (spec.getNode() != null) {
      block.getMetadata().getLabels().put(ApiConstants.LABEL_NODE, spec.getNode());
    }
    block.setSpec(spec);
    return block;
  }
}
