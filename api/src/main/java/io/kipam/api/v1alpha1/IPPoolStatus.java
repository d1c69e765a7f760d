package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/**
 * What the operator observed of a pool. Address counts are decimal strings: an IPv6 pool can hold
 * more addresses than a 64-bit integer can count (a /64 holds 2^64), and the status must stay true.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class IPPoolStatus {

  @Pattern("^[0-9]+$")
  @JsonPropertyDescription(
      "Addresses the pool can hand out in all (range minus excludes, gateway, network and"
          + " broadcast addresses), as an exact decimal string.")
  private String capacity;

  @JsonPropertyDescription("Addresses currently allocated, summed over the pool's blocks.")
  private Long allocated;

  @Pattern("^[0-9]+$")
  @JsonPropertyDescription("capacity minus allocated, as an exact decimal string.")
  private String available;

  @JsonPropertyDescription(
      "When kipam-operator counted allocated and available (RFC 3339), from the block counts the"
          + " node daemons had written by then; renewed when the counts change, and every few"
          + " seconds while none is available. A node daemon calls the pool exhausted (CNI code"
          + " 100) only on a count taken well after its own last allocation or release in the"
          + " pool; otherwise it answers try again (code 11).")
  private String countedAt;

  @JsonPropertyDescription("Number of IPBlocks leased from the pool.")
  private Integer blocks;

  @JsonPropertyDescription(
      "Nodes that may use the pool: Node objects matching spec.nodeSelector (every Node when it"
          + " is empty), as kipam-operator counts them. kipam-node claims a slot Shared from birth"
          + " when the pool has fewer unclaimed slots than this.")
  private Integer nodes;

  @JsonPropertyDescription("The spec generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription(
      "Ready (daemons may allocate), Exhausted (no assignable address is left), Terminating, and"
          + " DuplicateAddresses while the audit finds addresses of the pool held twice.")
  private List<Condition> conditions = new ArrayList<>();

  public String getCapacity() {
    return capacity;
  }

  public void setCapacity(String capacity) {
    this.capacity = capacity;
  }

  public Long getAllocated() {
    return allocated;
  }

  public void setAllocated(Long allocated) {
    this.allocated = allocated;
  }

  public String getAvailable() {
    return available;
  }

  public void setAvailable(String available) {
    this.available = available;
  }

  public String getCountedAt() {
    return countedAt;
  }

  public void setCountedAt(String countedAt) {
    this.countedAt = countedAt;
  }

  public Integer getBlocks() {
    return blocks;
  }

  public void setBlocks(Integer blocks) {
    this.blocks = blocks;
  }

  public Integer getNodes() {
    return nodes;
  }

  public void setNodes(Integer nodes) {
    this.nodes = nodes;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }
}
