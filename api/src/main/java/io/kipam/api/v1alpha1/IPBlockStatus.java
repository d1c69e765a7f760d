package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** Kept current by the holding node's daemon (coalesced) and read by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class IPBlockStatus {

  @JsonPropertyDescription("Addresses of the block currently allocated on its node.")
  private Long allocated;

  @JsonPropertyDescription(
      "How the slot's addresses are handed out, written by its holder: Exclusive (absent means"
          + " Exclusive) or Shared, where every address is claimed by a sub-claim. Moves only from"
          + " Exclusive to Shared. A slot without spec.node is Shared.")
  private BlockMode mode;

  @JsonPropertyDescription("The release handshake, when the operator has asked for the block back.")
  private BlockRelease release;

  @JsonPropertyDescription(
      "kipam-operator's request to convert this Exclusive slot to Shared; the holder answers by"
          + " writing status.mode: Shared once it has sub-claimed every address it holds. Kept"
          + " afterwards as a record. Only on a slot, never on a sub-claim.")
  private BlockShare share;

  @JsonPropertyDescription("Conditions of the block, e.g. Duplicate when an address is held twice.")
  private List<Condition> conditions = new ArrayList<>();

  public Long getAllocated() {
    return allocated;
  }

  public void setAllocated(Long allocated) {
    this.allocated = allocated;
  }

  public BlockMode getMode() {
    return mode;
  }

  public void setMode(BlockMode mode) {
    this.mode = mode;
  }

  public BlockRelease getRelease() {
    return release;
  }

  public void setRelease(BlockRelease release) {
    this.release = release;
  }

  public BlockShare getShare() {
    return share;
  }

  public void setShare(BlockShare share) {
    this.share = share;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }
}
