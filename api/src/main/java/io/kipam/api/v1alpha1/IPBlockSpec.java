package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Which pool a block belongs to, which addresses it covers and which node holds it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self == oldSelf",
    message = "spec of an IPBlock is immutable: release the block and claim another instead")
public class IPBlockSpec {

  @Required
  @Size(max = 63)
  @JsonPropertyDescription("Name of the IPPool the block is carved from.")
  private String pool;

  @Required
  @Size(max = 49)
  @ValidationRule(
      value = "isCIDR(self) && string(cidr(self)) == self && cidr(self).masked() == cidr(self)",
      message = "spec.cidr must be a canonical CIDR with no host bits set")
  @JsonPropertyDescription("The block's addresses: a canonical CIDR inside the pool's.")
  private String cidr;

  @Required
  @Size(max = 253)
  @JsonPropertyDescription("Name of the Node whose kipam-node daemon holds the block.")
  private String node;

  public IPBlockSpec() {}

  public IPBlockSpec(String pool, String cidr, String node) {
    this.pool = pool;
    this.cidr = cidr;
    this.node = node;
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
}
