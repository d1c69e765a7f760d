package io.kipam.node.kube;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.node.alloc.BlockObject;
import io.kipam.node.alloc.BlockRef;

/** How an IPBlock object reads for the ledger, in one place for the watches. */
final class Blocks {

  private Blocks() {}

  static BlockRef ref(IPBlock block) {
    return new BlockRef(
        block.getSpec().getPool(),
        Cidr.parse(block.getSpec().getCidr()),
        block.getMetadata().getUid());
  }

  static BlockObject object(IPBlock block) {
    var status = block.getStatus();
    var release = status == null ? null : status.getRelease();
    return new BlockObject(
        ref(block),
        block.getMetadata().getResourceVersion(),
        status != null,
        release == null ? null : release.getState(),
        release == null ? null : release.getRequestedAt(),
        status == null ? null : status.getAllocated(),
        block.getMetadata().getDeletionTimestamp() != null,
        status != null && status.getMode() == BlockMode.Shared,
        status == null || status.getShare() == null ? null : status.getShare().getRequestedAt());
  }

  /**
   * Whether the block's name is the one kipam gives its pool and CIDR ({@link
   * ResourceNames#blockName}, which is also a sub-claim's): the name is what a claim's {@code
   * create} wins, so a block named for one slot whose CIDR is another's is no claim of either.
   */
  static boolean named(IPBlock block) {
    if (block.getMetadata() == null || block.getSpec() == null) {
      return false;
    }
    try {
      return ResourceNames.blockName(
              block.getSpec().getPool(), Cidr.parse(block.getSpec().getCidr()))
          .equals(block.getMetadata().getName());
    } catch (RuntimeException unreadable) {
      return false;
    }
  }
}
