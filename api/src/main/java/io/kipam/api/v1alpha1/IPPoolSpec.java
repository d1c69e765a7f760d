package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SchemaFrom;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.List;

/** What a pool hands out, to whom, and how nodes lease it. One IP family per pool. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = PoolRules.RANGE_START_FAMILY,
    message = PoolRules.RANGE_START_FAMILY_MESSAGE)
@ValidationRule(value = PoolRules.RANGE_END_FAMILY, message = PoolRules.RANGE_END_FAMILY_MESSAGE)
@ValidationRule(
    value = PoolRules.RANGE_START_INSIDE,
    message = PoolRules.RANGE_START_INSIDE_MESSAGE)
@ValidationRule(value = PoolRules.RANGE_END_INSIDE, message = PoolRules.RANGE_END_INSIDE_MESSAGE)
@ValidationRule(value = RangeOrderRule.RULE, message = RangeOrderRule.MESSAGE)
@ValidationRule(
    value = PoolRules.EXCLUDES_INSIDE,
    messageExpression = PoolRules.EXCLUDES_INSIDE_MESSAGE)
@ValidationRule(value = PoolRules.GATEWAY_INSIDE, message = PoolRules.GATEWAY_INSIDE_MESSAGE)
@ValidationRule(
    value = PoolRules.BLOCK_SIZE_NOT_WIDER,
    message = PoolRules.BLOCK_SIZE_NOT_WIDER_MESSAGE)
@ValidationRule(
    value = PoolRules.BLOCK_SIZE_IN_FAMILY,
    message = PoolRules.BLOCK_SIZE_IN_FAMILY_MESSAGE)
@ValidationRule(value = PoolRules.ROUTES_VALID, message = PoolRules.ROUTES_VALID_MESSAGE)
@ValidationRule(value = PoolRules.CIDR_IMMUTABLE, message = PoolRules.CIDR_IMMUTABLE_MESSAGE)
@ValidationRule(
    value = PoolRules.BLOCK_SIZE_IMMUTABLE,
    message = PoolRules.BLOCK_SIZE_IMMUTABLE_MESSAGE)
@ValidationRule(value = PoolRules.NETWORK_IMMUTABLE, message = PoolRules.NETWORK_IMMUTABLE_MESSAGE)
public class IPPoolSpec {

  @Required
  @Size(max = 49)
  @ValidationRule(value = PoolRules.CIDR_PARSES, message = PoolRules.CIDR_PARSES_MESSAGE)
  @ValidationRule(value = PoolRules.CIDR_CANONICAL, message = PoolRules.CIDR_CANONICAL_MESSAGE)
  @ValidationRule(
      value = PoolRules.CIDR_NO_HOST_BITS,
      message = PoolRules.CIDR_NO_HOST_BITS_MESSAGE)
  @JsonPropertyDescription(
      "The pool's network in canonical form, e.g. 10.244.0.0/16 or fd00:10:244::/56. One IP family"
          + " per pool: a dual-stack attachment uses one IPv4 and one IPv6 pool.")
  private String cidr;

  @Size(max = 45)
  @ValidationRule(
      value = PoolRules.ADDRESS_CANONICAL,
      message = "spec.rangeStart must be a canonical IP address, e.g. 10.0.0.10 or fd00::a")
  @JsonPropertyDescription(
      "First address that may be handed out (inclusive). Defaults to the start of spec.cidr.")
  private String rangeStart;

  @Size(max = 45)
  @ValidationRule(
      value = PoolRules.ADDRESS_CANONICAL,
      message = "spec.rangeEnd must be a canonical IP address, e.g. 10.0.0.200 or fd00::ff")
  @JsonPropertyDescription(
      "Last address that may be handed out (inclusive). Defaults to the end of spec.cidr.")
  private String rangeEnd;

  @Size(max = 256)
  @JsonPropertyDescription(
      "Addresses (10.0.0.7) and CIDRs (10.0.0.64/28) inside spec.cidr that are never handed out.")
  private List<@Size(max = 49) String> exclude;

  @Size(max = 45)
  @ValidationRule(
      value = PoolRules.ADDRESS_CANONICAL,
      message = "spec.gateway must be a canonical IP address, e.g. 10.0.0.1 or fd00::1")
  @JsonPropertyDescription(
      "Gateway reported to pods in the CNI result; never handed out as a pod address.")
  private String gateway;

  @Size(max = 32)
  @JsonPropertyDescription("Routes reported to pods in the CNI result.")
  private List<Route> routes;

  @JsonPropertyDescription("DNS settings reported to pods in the CNI result.")
  private Dns dns;

  @Size(max = 63)
  @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
  @JsonPropertyDescription(
      "Name of the isolated network this pool belongs to. Pools of different networks may"
          + " overlap; pools of one network (or of none) may not: the older pool wins and the newer"
          + " one is not Ready.")
  private String network;

  @Min(0)
  @Max(128)
  @JsonPropertyDescription(
      "Prefix length of the blocks nodes lease from this pool. Defaults to /26 for IPv4 and /122"
          + " for IPv6 (or the pool's own prefix when the pool is smaller). A host prefix (/32,"
          + " /128) makes every allocation lease a one-address block: the mode for small ranges"
          + " shared by many nodes.")
  private Integer blockSize;

  @SchemaFrom(type = SelectorSchema.class)
  @JsonPropertyDescription("Only nodes matching this selector allocate from the pool; empty: all.")
  private LabelSelector nodeSelector;

  @SchemaFrom(type = SelectorSchema.class)
  @JsonPropertyDescription(
      "Only pods in namespaces matching this selector get addresses from the pool; empty: all.")
  private LabelSelector namespaceSelector;

  @Min(1)
  @JsonPropertyDescription(
      "At most this many blocks of the pool per node, capping what one node (or a compromised"
          + " one) can take. Unset: no cap.")
  private Integer maxBlocksPerNode;

  @Min(0)
  @Max(86400)
  @Default("30")
  @JsonPropertyDescription(
      "Seconds a released address waits before it is handed out again, so that stale ARP/ND"
          + " entries and connections to the previous holder age out.")
  private Integer reuseDelaySeconds;

  public String getCidr() {
    return cidr;
  }

  public void setCidr(String cidr) {
    this.cidr = cidr;
  }

  public String getRangeStart() {
    return rangeStart;
  }

  public void setRangeStart(String rangeStart) {
    this.rangeStart = rangeStart;
  }

  public String getRangeEnd() {
    return rangeEnd;
  }

  public void setRangeEnd(String rangeEnd) {
    this.rangeEnd = rangeEnd;
  }

  public List<String> getExclude() {
    return exclude;
  }

  public void setExclude(List<String> exclude) {
    this.exclude = exclude;
  }

  public String getGateway() {
    return gateway;
  }

  public void setGateway(String gateway) {
    this.gateway = gateway;
  }

  public List<Route> getRoutes() {
    return routes;
  }

  public void setRoutes(List<Route> routes) {
    this.routes = routes;
  }

  public Dns getDns() {
    return dns;
  }

  public void setDns(Dns dns) {
    this.dns = dns;
  }

  public String getNetwork() {
    return network;
  }

  public void setNetwork(String network) {
    this.network = network;
  }

  public Integer getBlockSize() {
    return blockSize;
  }

  public void setBlockSize(Integer blockSize) {
    this.blockSize = blockSize;
  }

  public LabelSelector getNodeSelector() {
    return nodeSelector;
  }

  public void setNodeSelector(LabelSelector nodeSelector) {
    this.nodeSelector = nodeSelector;
  }

  public LabelSelector getNamespaceSelector() {
    return namespaceSelector;
  }

  public void setNamespaceSelector(LabelSelector namespaceSelector) {
    this.namespaceSelector = namespaceSelector;
  }

  public Integer getMaxBlocksPerNode() {
    return maxBlocksPerNode;
  }

  public void setMaxBlocksPerNode(Integer maxBlocksPerNode) {
    this.maxBlocksPerNode = maxBlocksPerNode;
  }

  public Integer getReuseDelaySeconds() {
    return reuseDelaySeconds;
  }

  public void setReuseDelaySeconds(Integer reuseDelaySeconds) {
    this.reuseDelaySeconds = reuseDelaySeconds;
  }
}
