package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * kipam-operator's request that the holder of an Exclusive slot convert it to Shared. The holder's
 * answer is {@code status.mode: Shared}, written once it has sub-claimed every address of the slot
 * it holds or might hold; the request then stays as a record of why the slot is Shared.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BlockShare {

  @Required
  @Size(max = 64)
  @JsonPropertyDescription("When the operator asked (RFC 3339).")
  private String requestedAt;

  @Size(max = 1024)
  @JsonPropertyDescription("Why the operator asked, e.g. which node of the pool is short.")
  private String reason;

  public String getRequestedAt() {
    return requestedAt;
  }

  public void setRequestedAt(String requestedAt) {
    this.requestedAt = requestedAt;
  }

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }
}
