package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/** One round of the release handshake between the operator and the block's node daemon. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BlockRelease {

  @Required
  @JsonPropertyDescription("Requested by the operator; Ready or Refused by the node daemon.")
  private ReleaseState state;

  @JsonPropertyDescription("When the operator asked (RFC 3339); identifies the round.")
  private String requestedAt;

  @JsonPropertyDescription("When the node daemon answered (RFC 3339).")
  private String respondedAt;

  @JsonPropertyDescription("Why the operator asked, or why the daemon refused.")
  private String reason;

  public ReleaseState getState() {
    return state;
  }

  public void setState(ReleaseState state) {
    this.state = state;
  }

  public String getRequestedAt() {
    return requestedAt;
  }

  public void setRequestedAt(String requestedAt) {
    this.requestedAt = requestedAt;
  }

  public String getRespondedAt() {
    return respondedAt;
  }

  public void setRespondedAt(String respondedAt) {
    this.respondedAt = respondedAt;
  }

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }
}
