package io.kipam.api.v1alpha1;

/**
 * The CEL rules that make the API server refuse an invalid {@link IPBlock}, in particular the rules
 * of exclusive and shared slots and their sub-claims. Like {@link PoolRules}, each rule guards
 * against inputs an earlier rule already rejects, so that only the message naming the real problem
 * is returned.
 *
 * <p>What CEL cannot check, because a rule sees only the object it validates: that a sub-claim's
 * CIDR lies inside its parent's, that the parent exists and is Shared, and that a block lies inside
 * its pool. Those are left to kipam-node and kipam-operator.
 */
final class BlockRules {

  private BlockRules() {}

  static final String CIDR_CANONICAL =
      "isCIDR(self) && string(cidr(self)) == self && cidr(self).masked() == cidr(self)";
  static final String CIDR_CANONICAL_MESSAGE =
      "spec.cidr must be a canonical CIDR with no host bits set";

  static final String SPEC_IMMUTABLE = "self == oldSelf";
  static final String SPEC_IMMUTABLE_MESSAGE =
      "spec of an IPBlock is immutable: release the block and claim another instead";

  // Also covered by SPEC_IMMUTABLE; this one says what adding or removing a parent would mean.
  static final String PARENT_IMMUTABLE =
      "has(self.parent) == has(oldSelf.parent)"
          + " && (!has(self.parent) || self.parent == oldSelf.parent)";
  static final String PARENT_IMMUTABLE_MESSAGE =
      "spec.parent is immutable (also setting or unsetting it): a sub-claim and a slot are"
          + " different claims; delete the block and create the other kind";

  static final String SUB_CLAIM_HOST_PREFIX =
      "!has(self.parent) || !isCIDR(self.cidr)"
          + " || cidr(self.cidr).prefixLength() == (cidr(self.cidr).ip().family() == 4 ? 32 : 128)";
  static final String SUB_CLAIM_HOST_PREFIX_MESSAGE =
      "spec.cidr of a sub-claim (spec.parent set) must be a host prefix: one address, /32 for IPv4"
          + " or /128 for IPv6";

  static final String SUB_CLAIM_SAME_POOL =
      "!has(self.parent) || self.parent.startsWith(self.pool + '.')";
  static final String SUB_CLAIM_SAME_POOL_MESSAGE =
      "spec.parent must name a slot of spec.pool: an IPBlock name that starts with spec.pool and"
          + " '.'";

  static final String SUB_CLAIM_HAS_NODE = "!has(self.parent) || has(self.node) || has(self.claim)";
  static final String SUB_CLAIM_HAS_NODE_MESSAGE =
      "spec.node is required on a sub-claim (spec.parent set): it names the node that holds the"
          + " address; only a slot claimed Shared from birth, and the sub-claim of a persistent"
          + " address (spec.claim), have no node";

  static final String CLAIM_ONLY_ON_NODELESS_SUB_CLAIM =
      "!has(self.claim) || (has(self.parent) && !has(self.node))";
  static final String CLAIM_ONLY_ON_NODELESS_SUB_CLAIM_MESSAGE =
      "spec.claim is set only on the sub-claim of a persistent address: with spec.parent, and"
          + " without spec.node (the IPAMClaim holds it, not a node)";

  // Root-level rules: they need spec and status together. Status cannot be set on create (the
  // status subresource drops it), so a slot created without a node is Shared by that fact alone;
  // these rules keep status.mode from ever saying otherwise.
  static final String NODELESS_IS_SHARED =
      "!has(self.status) || !has(self.status.mode) || self.status.mode == 'Shared'"
          + " || (has(self.spec) && has(self.spec.node))";
  static final String NODELESS_IS_SHARED_MESSAGE =
      "status.mode of a block without spec.node must be Shared: no node holds it, so no node may"
          + " allocate in it from memory";

  static final String SHARED_STAYS_SHARED =
      "!has(oldSelf.status) || !has(oldSelf.status.mode) || oldSelf.status.mode != 'Shared'"
          + " || (has(self.status) && has(self.status.mode) && self.status.mode == 'Shared')";
  static final String SHARED_STAYS_SHARED_MESSAGE =
      "status.mode cannot leave Shared (neither back to Exclusive nor unset): nodes claim"
          + " addresses of a Shared slot through sub-claims and must never see it Exclusive again";

  static final String SUB_CLAIM_HAS_NO_MODE =
      "!has(self.spec) || !has(self.spec.parent) || !has(self.status) || !has(self.status.mode)";
  static final String SUB_CLAIM_HAS_NO_MODE_MESSAGE =
      "status.mode is for slots: a sub-claim (spec.parent set) is one address of one node and has"
          + " no mode";

  static final String SHARE_ONLY_ON_SLOTS =
      "!has(self.spec) || !has(self.spec.parent) || !has(self.status) || !has(self.status.share)";
  static final String SHARE_ONLY_ON_SLOTS_MESSAGE =
      "status.share is for slots: a sub-claim (spec.parent set) is one address already claimed"
          + " on its own and cannot be converted";
}
