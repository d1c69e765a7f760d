package io.kipam.operator.admission;

import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.SlotModes;
import java.util.Map;
import java.util.Optional;

/**
 * The two checks of kipam's admission webhook, for writes made with a token bound to a Node (the
 * {@code authentication.kubernetes.io/node-name} extra): each needs another object than the one
 * written, which a ValidatingAdmissionPolicy can only see as a parameter evaluated once per object
 * of its kind (docs/security.md). Everything a policy can check from the request alone stays in the
 * policies.
 *
 * <ul>
 *   <li>An IPAddress of the caller's node names in {@code kipam.io/block} a block that exists and
 *       that the node may allocate from: its own slot or sub-claim, a Shared slot, or the sub-claim
 *       of the IPAMClaim the address is for. Naming another's block would pin it (kipam-operator
 *       releases no block an IPAddress names); naming one that does not exist would let a slot be
 *       claimed again under the address.
 *   <li>A sub-claim (an IPBlock with {@code spec.parent}) lies inside its parent, a slot of the
 *       same pool that exists and is Shared, or is the caller's own (its holder sub-claims its
 *       addresses while converting it).
 * </ul>
 *
 * A refusal read from kipam-operator's cache is confirmed by a fresh read before it is answered, so
 * a block created or converted a moment ago is never refused for a stale view.
 */
public final class AdmissionRules {

  /** The blocks the rules look up: from a cache, and afresh from the API server. */
  public interface Blocks {
    Optional<IPBlock> cached(String name);

    Optional<IPBlock> fresh(String name);
  }

  /** An answer: allowed, or refused with a message naming what is wrong. */
  public record Verdict(boolean allowed, String message) {
    static final Verdict ALLOWED = new Verdict(true, null);

    static Verdict refused(String message) {
      return new Verdict(false, message);
    }
  }

  private final Blocks blocks;

  public AdmissionRules(Blocks blocks) {
    this.blocks = blocks;
  }

  /**
   * The answer to a create of {@code address} by the node {@code node} (null when the token is not
   * bound to one node: the policies decide those alone).
   */
  public Verdict addressCreate(IPAddress address, String node) {
    Map<String, String> labels = address.getMetadata().getLabels();
    String label = labels == null ? null : labels.get(ApiConstants.LABEL_BLOCK);
    var spec = address.getSpec();
    if (node == null || label == null || spec == null || spec.getPool() == null) {
      return Verdict.ALLOWED; // the policies refuse what lacks these
    }
    if (!node.equals(spec.getNode())) {
      return Verdict.ALLOWED; // an IPAddress for another node is node-policy.yaml's to refuse
    }
    String name = spec.getPool() + "." + label;
    return confirmed(name, block -> addressVerdict(address, node, name, block));
  }

  /**
   * The answer to a create of {@code block} by the node {@code node}; see {@link #addressCreate}.
   */
  public Verdict blockCreate(IPBlock block, String node) {
    var spec = block.getSpec();
    if (node == null || spec == null || spec.getParent() == null) {
      return Verdict.ALLOWED;
    }
    return confirmed(spec.getParent(), parent -> subClaimVerdict(block, node, parent));
  }

  /** Decides from the cache; a refusal is decided again from a fresh read. */
  private Verdict confirmed(
      String name, java.util.function.Function<Optional<IPBlock>, Verdict> decide) {
    Verdict cached = decide.apply(blocks.cached(name));
    return cached.allowed() ? cached : decide.apply(blocks.fresh(name));
  }

  private static Verdict addressVerdict(
      IPAddress address, String node, String name, Optional<IPBlock> found) {
    String what =
        "kipam-node of node "
            + node
            + " may not create IPAddress "
            + address.getMetadata().getNamespace()
            + "/"
            + address.getMetadata().getName()
            + " naming IPBlock "
            + name
            + " in kipam.io/block: ";
    if (found.isEmpty()) {
      return Verdict.refused(
          what + "no such IPBlock exists; an IPAddress names the block its address lies in");
    }
    IPBlock block = found.get();
    var spec = block.getSpec();
    if (node.equals(spec.getNode())) {
      return Verdict.ALLOWED;
    }
    if (spec.getClaim() != null) {
      boolean itsClaim =
          spec.getClaim().getName().equals(address.getSpec().getClaim())
              && spec.getClaim().getNamespace().equals(address.getMetadata().getNamespace());
      return itsClaim
          ? Verdict.ALLOWED
          : Verdict.refused(
              what
                  + "it is the sub-claim of IPAMClaim "
                  + spec.getClaim().getNamespace()
                  + "/"
                  + spec.getClaim().getName()
                  + ", not of this address's claim");
    }
    if (!SlotModes.subClaim(block) && SlotModes.shared(block)) {
      return Verdict.ALLOWED;
    }
    return Verdict.refused(
        what
            + "it is held by "
            + (spec.getNode() == null ? "no node" : "node " + spec.getNode())
            + " and not Shared; an IPAddress names a block its node holds, a Shared slot or its"
            + " IPAMClaim's sub-claim");
  }

  private static Verdict subClaimVerdict(IPBlock subClaim, String node, Optional<IPBlock> found) {
    var spec = subClaim.getSpec();
    String what =
        "node "
            + node
            + " may not create sub-claim "
            + spec.getCidr()
            + " of pool "
            + spec.getPool()
            + " under "
            + spec.getParent()
            + ": ";
    if (found.isEmpty()) {
      return Verdict.refused(
          what + "no such IPBlock exists; a sub-claim's parent is a Shared slot");
    }
    IPBlock parent = found.get();
    var parentSpec = parent.getSpec();
    if (SlotModes.subClaim(parent)) {
      return Verdict.refused(what + "it is a sub-claim itself, not a slot");
    }
    if (!inside(subClaim, parent)) {
      return Verdict.refused(
          what
              + "a sub-claim lies inside its parent, and slot "
              + parent.getMetadata().getName()
              + " is "
              + parentSpec.getCidr()
              + " of pool "
              + parentSpec.getPool());
    }
    if (SlotModes.shared(parent) || node.equals(parentSpec.getNode())) {
      return Verdict.ALLOWED;
    }
    return Verdict.refused(
        what
            + "the slot is Exclusive to node "
            + parentSpec.getNode()
            + "; a sub-claim is made only under a Shared slot, or by the slot's holder");
  }

  private static boolean inside(IPBlock subClaim, IPBlock parent) {
    try {
      Cidr child = Cidr.parse(subClaim.getSpec().getCidr());
      Cidr slot = Cidr.parse(parent.getSpec().getCidr());
      return subClaim.getSpec().getPool().equals(parent.getSpec().getPool())
          && slot.prefixLength() < child.prefixLength()
          && slot.contains(child.network());
    } catch (RuntimeException unreadable) {
      return false;
    }
  }
}
