package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Which pool a block belongs to, which addresses it covers and which node holds it. A slot has the
 * pool's {@code blockSize}; a sub-claim ({@code parent} set) is one address of a Shared slot. A
 * slot without {@code node} was claimed Shared from birth.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = BlockRules.SPEC_IMMUTABLE, message = BlockRules.SPEC_IMMUTABLE_MESSAGE)
@ValidationRule(value = BlockRules.PARENT_IMMUTABLE, message = BlockRules.PARENT_IMMUTABLE_MESSAGE)
@ValidationRule(
    value = BlockRules.SUB_CLAIM_HOST_PREFIX,
    message = BlockRules.SUB_CLAIM_HOST_PREFIX_MESSAGE)
@ValidationRule(
    value = BlockRules.SUB_CLAIM_SAME_POOL,
    message = BlockRules.SUB_CLAIM_SAME_POOL_MESSAGE)
@ValidationRule(
    value = BlockRules.SUB_CLAIM_HAS_NODE,
    message = BlockRules.SUB_CLAIM_HAS_NODE_MESSAGE)
@ValidationRule(
    value = BlockRules.CLAIM_ONLY_ON_NODELESS_SUB_CLAIM,
    message = BlockRules.CLAIM_ONLY_ON_NODELESS_SUB_CLAIM_MESSAGE)
public class IPBlockSpec {

  @Required
  @Size(max = 63)
  @JsonPropertyDescription("Name of the IPPool the block is carved from.")
  private String pool;

  @Required
  @Size(max = 49)
  @ValidationRule(value = BlockRules.CIDR_CANONICAL, message = BlockRules.CIDR_CANONICAL_MESSAGE)
  @JsonPropertyDescription("The block's addresses: a canonical CIDR inside the pool's.")
  private String cidr;

  @Size(min = 1, max = 253)
  @JsonPropertyDescription(
      "Name of the Node whose kipam-node daemon holds the block. Absent only on a slot claimed"
          + " Shared from birth, which no single node holds.")
  private String node;

  @Size(min = 1, max = 253)
  @JsonPropertyDescription(
      "Set only on a sub-claim: the name of the Shared slot (an IPBlock of the same pool) one of"
          + " whose addresses this host-prefix block claims for spec.node.")
  private String parent;

  @JsonPropertyDescription(
      "Set only on the sub-claim of a persistent address: the IPAMClaim that holds it. Such a"
          + " sub-claim has no spec.node: the address follows the claim's pods from node to node.")
  private ClaimReference claim;

  public IPBlockSpec() {}

  public IPBlockSpec(String pool, String cidr, String node) {
    this.pool = pool;
    this.cidr = cidr;
    this.node = node;
  }

  /**
   * A sub-claim of {@code address} (a host-prefix CIDR) in slot {@code parent}, held by {@code
   * node}.
   */
  public static IPBlockSpec subClaim(String pool, String cidr, String node, String parent) {
    IPBlockSpec spec = new IPBlockSpec(pool, cidr, node);
    spec.setParent(parent);
    return spec;
  }

  /**
   * The sub-claim of a persistent address ({@code cidr}, host prefix) in slot {@code parent}, held
   * by the IPAMClaim {@code claim} rather than by a node.
   */
  public static IPBlockSpec claimed(String pool, String cidr, String parent, ClaimReference claim) {
    IPBlockSpec spec = new IPBlockSpec(pool, cidr, null);
    spec.setParent(parent);
    spec.setClaim(claim);
    return spec;
  }

  public ClaimReference getClaim() {
    return claim;
  }

  public void setClaim(ClaimReference claim) {
    this.claim = claim;
  }

  public String getPool() {
    return pool;
  }

  public void setPool(String pool) {
    this.pool = pool;
  }

  public String getCidr() {
    return cidr;
  }

  public void setCidr(String cidr) {
    this.cidr = cidr;
  }

  public String getNode() {
    return node;
  }

  public void setNode(String node) {
    this.node = node;
  }

  public String getParent() {
    return parent;
  }

  public void setParent(String parent) {
    this.parent = parent;
  }
}
