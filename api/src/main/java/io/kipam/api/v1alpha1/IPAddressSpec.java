package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Who holds an address, through which attachment, and from which pool and block. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self == oldSelf",
    message = "spec of an IPAddress is immutable: delete it and allocate again instead")
public class IPAddressSpec {

  @Required
  @Size(max = 45)
  @ValidationRule(
      value = "isIP(self) && ip.isCanonical(self)",
      message = "spec.ip must be a canonical IP address")
  @JsonPropertyDescription("The allocated address, in canonical form.")
  private String ip;

  @Required
  @Size(max = 63)
  @JsonPropertyDescription("Name of the IPPool the address comes from.")
  private String pool;

  @Required
  @Size(max = 253)
  @JsonPropertyDescription("Name of the IPBlock the address comes from.")
  private String block;

  @Required
  @Size(max = 253)
  @JsonPropertyDescription("Node whose kipam-node daemon allocated the address.")
  private String node;

  @Required
  @Size(max = 253)
  @JsonPropertyDescription(
      "Name of the CNI network (the network configuration's name, e.g. a Multus"
          + " NetworkAttachmentDefinition's) the attachment belongs to. CNI GC of one network"
          + " collects only that network's addresses, also where networks share a pool.")
  private String network;

  @Required
  @JsonPropertyDescription("The Pod holding the address.")
  private PodReference pod;

  @Required
  @Size(max = 256)
  @JsonPropertyDescription("Container runtime's ID of the pod sandbox (CNI_CONTAINERID).")
  private String containerID;

  @Required
  @Size(max = 64)
  @JsonProperty("interface")
  @JsonPropertyDescription("Interface name inside the pod (CNI_IFNAME), e.g. eth0 or net1.")
  private String interfaceName;

  @Size(max = 253)
  @JsonPropertyDescription(
      "Set on the address of an IPAMClaim (a persistent address): the claim's name, in this"
          + " namespace. The claim holds the address between pods; this object is one pod's"
          + " attachment of it.")
  private String claim;

  @Size(max = 17)
  @Pattern("^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
  @JsonPropertyDescription("MAC address of the interface, when the runtime told it; lowercase.")
  private String mac;

  public String getIp() {
    return ip;
  }

  public void setIp(String ip) {
    this.ip = ip;
  }

  public String getPool() {
    return pool;
  }

  public void setPool(String pool) {
    this.pool = pool;
  }

  public String getBlock() {
    return block;
  }

  public void setBlock(String block) {
    this.block = block;
  }

  public String getNode() {
    return node;
  }

  public void setNode(String node) {
    this.node = node;
  }

  public String getNetwork() {
    return network;
  }

  public void setNetwork(String network) {
    this.network = network;
  }

  public PodReference getPod() {
    return pod;
  }

  public void setPod(PodReference pod) {
    this.pod = pod;
  }

  public String getContainerID() {
    return containerID;
  }

  public void setContainerID(String containerID) {
    this.containerID = containerID;
  }

  @JsonProperty("interface")
  public String getInterfaceName() {
    return interfaceName;
  }

  @JsonProperty("interface")
  public void setInterfaceName(String interfaceName) {
    this.interfaceName = interfaceName;
  }

  public String getClaim() {
    return claim;
  }

  public void setClaim(String claim) {
    this.claim = claim;
  }

  public String getMac() {
    return mac;
  }

  public void setMac(String mac) {
    this.mac = mac;
  }
}
