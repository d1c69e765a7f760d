package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.SlotModes;
import java.util.Optional;

/** What the operator reads off an IPBlock, tolerating blocks written by hand. */
public final class Blocks {

  private Blocks() {}

  /** The block's pool: {@code spec.pool}, else its {@code kipam.io/pool} label. */
  public static Optional<String> poolOf(IPBlock block) {
    if (block.getSpec() != null && block.getSpec().getPool() != null) {
      return Optional.of(block.getSpec().getPool());
    }
    return Optional.ofNullable(block.getMetadata().getLabels())
        .map(labels -> labels.get(ApiConstants.LABEL_POOL));
  }

  /**
   * Whether {@code block} belongs to this very pool object: it names the pool and is not owned by
   * an earlier pool of the same name (a block without an owner reference, claimed before its node
   * knew the pool's UID, belongs to the pool it names).
   */
  public static boolean belongsTo(IPBlock block, IPPool pool) {
    if (!poolOf(block).map(pool.getMetadata().getName()::equals).orElse(false)) {
      return false;
    }
    return block.getMetadata().getOwnerReferences() == null
        || block.getMetadata().getOwnerReferences().stream()
            .filter(o -> IPPool.KIND.equals(o.getKind()))
            .map(OwnerReference::getUid)
            .allMatch(pool.getMetadata().getUid()::equals);
  }

  /**
   * A slot handed out address by address: {@code status.mode: Shared}, or claimed without a node
   * (Shared from birth, its mode written just after). No node's release handshake applies to it; it
   * leaves the pool only by the two-sided check of docs/shared-slots.md.
   */
  public static boolean shared(IPBlock block) {
    return SlotModes.shared(block);
  }

  /** A sub-claim: the host-prefix block of one address of a Shared slot ({@code spec.parent}). */
  public static boolean subClaim(IPBlock block) {
    return SlotModes.subClaim(block);
  }

  /** The {@code kipam.io/block} label value the block's IPAddresses carry. */
  public static String addressLabel(IPBlock block) {
    return ResourceNames.blockLabel(Cidr.parse(block.getSpec().getCidr()));
  }

  /**
   * {@code status.allocated}, if the block's daemon has reported it: a block without a count is
   * unknown, not empty.
   */
  public static Optional<Long> reportedAllocated(IPBlock block) {
    Long allocated = block.getStatus() == null ? null : block.getStatus().getAllocated();
    return Optional.ofNullable(allocated).map(n -> Math.max(0, n));
  }

  /**
   * {@code status.allocated} for sums; absent (the daemon has not reported yet) counts as 0. The
   * sub-claim of an IPAMClaim's address counts 1: no node reports it, and the claim holds the
   * address whether a pod is attached or not.
   */
  public static long allocated(IPBlock block) {
    if (block.getSpec() != null && block.getSpec().getClaim() != null) {
      return 1;
    }
    Long allocated = block.getStatus() == null ? null : block.getStatus().getAllocated();
    return allocated == null ? 0 : Math.max(0, allocated);
  }
}
