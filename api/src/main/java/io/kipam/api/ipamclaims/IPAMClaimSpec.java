package io.kipam.api.ipamclaims;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/** For which network and which pod interface the claim's addresses are. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class IPAMClaimSpec {

  /** The network name (the CNI configuration's {@code name}) the claim is for. */
  private String network;

  /** The pod interface name the claim is for. */
  private String ipamInterface;

  public IPAMClaimSpec() {}

  public IPAMClaimSpec(String network, String ipamInterface) {
    this.network = network;
    this.ipamInterface = ipamInterface;
  }

  public String getNetwork() {
    return network;
  }

  public void setNetwork(String network) {
    this.network = network;
  }

  @JsonProperty("interface")
  public String getInterface() {
    return ipamInterface;
  }

  @JsonProperty("interface")
  public void setInterface(String ipamInterface) {
    this.ipamInterface = ipamInterface;
  }
}
