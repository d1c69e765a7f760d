package io.kipam.api.ipamclaims;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/**
 * What the IPAM has given the claim: its addresses in CIDR notation (one per family), the pod that
 * last attached them, and conditions.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class IPAMClaimStatus {

  private List<String> ips = new ArrayList<>();
  private OwnerPod ownerPod;
  private List<Condition> conditions;

  public List<String> getIps() {
    return ips;
  }

  public void setIps(List<String> ips) {
    this.ips = ips;
  }

  public OwnerPod getOwnerPod() {
    return ownerPod;
  }

  public void setOwnerPod(OwnerPod ownerPod) {
    this.ownerPod = ownerPod;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }

  /** The pod holding the claim, by name (in the claim's namespace). */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static class OwnerPod {
    private String name;

    public OwnerPod() {}

    public OwnerPod(String name) {
      this.name = name;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }
  }
}
