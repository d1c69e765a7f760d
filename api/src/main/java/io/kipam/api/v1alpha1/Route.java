package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** A route handed to pods with their address, as in the CNI result's {@code routes}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Route {

  @Required
  @Size(max = 49)
  @JsonPropertyDescription("Destination CIDR, of the pool's family, e.g. 0.0.0.0/0.")
  private String dst;

  @Size(max = 45)
  @JsonPropertyDescription("Next hop; when absent the pod's runtime uses the interface's gateway.")
  private String gw;

  public Route() {}

  public Route(String dst, String gw) {
    this.dst = dst;
    this.gw = gw;
  }

  public String getDst() {
    return dst;
  }

  public void setDst(String dst) {
    this.dst = dst;
  }

  public String getGw() {
    return gw;
  }

  public void setGw(String gw) {
    this.gw = gw;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Route r && Objects.equals(dst, r.dst) && Objects.equals(gw, r.gw);
  }

  @Override
  public int hashCode() {
    return Objects.hash(dst, gw);
  }
}
