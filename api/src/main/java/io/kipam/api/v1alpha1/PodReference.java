package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** The pod an address is allocated to, by name and UID (names are reused, UIDs never). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PodReference {

  @Required
  @Size(max = 253)
  @JsonPropertyDescription("Name of the Pod, in the IPAddress's namespace.")
  private String name;

  @Required
  @Size(max = 36)
  @JsonPropertyDescription("UID of the Pod; the ownerReference carries the same UID.")
  private String uid;

  public PodReference() {}

  public PodReference(String name, String uid) {
    this.name = name;
    this.uid = uid;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getUid() {
    return uid;
  }

  public void setUid(String uid) {
    this.uid = uid;
  }
}
