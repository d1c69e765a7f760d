package io.kipam.api.v1alpha1;

/**
 * How an IPBlock reads as a slot, the same for kipam-node and kipam-operator: Shared (handed out
 * address by address through sub-claims) or Exclusive (one node's), and whether it is a sub-claim.
 */
public final class SlotModes {

  private SlotModes() {}

  /**
   * A slot handed out address by address: {@code status.mode: Shared}, or claimed without a node
   * (Shared from birth, its mode written just after). Every reader decides by this first: {@code
   * spec.node} of a converted slot still names its former holder.
   */
  public static boolean shared(IPBlock block) {
    return block.getSpec().getNode() == null
        || block.getStatus() != null && block.getStatus().getMode() == BlockMode.Shared;
  }

  /** A sub-claim: the host-prefix block of one address of a Shared slot ({@code spec.parent}). */
  public static boolean subClaim(IPBlock block) {
    return block.getSpec().getParent() != null;
  }
}
