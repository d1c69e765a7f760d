package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * The IPAMClaim ({@code k8s.cni.cncf.io}) that holds a persistent address: namespace, name and UID
 * (a claim deleted and made again under the same name is another claim, and does not inherit the
 * address).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ClaimReference {

  @Required
  @Size(max = 63)
  @JsonPropertyDescription("Namespace of the IPAMClaim (and of the pods that use its address).")
  private String namespace;

  @Required
  @Size(max = 253)
  @JsonPropertyDescription("Name of the IPAMClaim.")
  private String name;

  @Required
  @Size(max = 36)
  @JsonPropertyDescription("UID of the IPAMClaim.")
  private String uid;

  public ClaimReference() {}

  public ClaimReference(String namespace, String name, String uid) {
    this.namespace = namespace;
    this.name = name;
    this.uid = uid;
  }

  public String getNamespace() {
    return namespace;
  }

  public void setNamespace(String namespace) {
    this.namespace = namespace;
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
