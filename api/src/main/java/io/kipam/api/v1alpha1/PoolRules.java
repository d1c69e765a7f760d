package io.kipam.api.v1alpha1;

/**
 * The CEL rules that make the API server refuse an invalid {@link IPPool} at admission. Each rule
 * guards against inputs an earlier rule already rejects (an unparsable CIDR, say), so that exactly
 * the message naming the real problem is returned rather than a CEL evaluation error.
 *
 * <p>They rely on the Kubernetes CEL IP and CIDR libraries ({@code isCIDR}, {@code cidr}, {@code
 * isIP}, {@code ip}, {@code ip.isCanonical}), which reject zone IDs and IPv4-mapped IPv6.
 */
final class PoolRules {

  static final String CIDR_PARSES = "isCIDR(self)";
  static final String CIDR_PARSES_MESSAGE =
      "spec.cidr must be a CIDR such as 10.0.0.0/16 or fd00:10::/64 (no zone, no IPv4-mapped IPv6)";

  static final String CIDR_CANONICAL = "!isCIDR(self) || string(cidr(self)) == self";
  static final String CIDR_CANONICAL_MESSAGE =
      "spec.cidr must be written canonically: lower case, IPv6 compressed as RFC 5952 says"
          + " (fd00:10::/64, not fd00:10:0:0::/64), no leading zeros";

  static final String CIDR_NO_HOST_BITS = "!isCIDR(self) || cidr(self).masked() == cidr(self)";
  static final String CIDR_NO_HOST_BITS_MESSAGE =
      "spec.cidr has host bits set: write the network address (10.0.0.0/24, not 10.0.0.1/24)";

  static final String ADDRESS_CANONICAL = "isIP(self) && ip.isCanonical(self)";

  private static final String POOL_FAMILY = "cidr(self.cidr).ip().family()";

  static final String RANGE_START_FAMILY =
      "!has(self.rangeStart) || !isCIDR(self.cidr) || !isIP(self.rangeStart)"
          + " || ip(self.rangeStart).family() == "
          + POOL_FAMILY;
  static final String RANGE_START_FAMILY_MESSAGE =
      "spec.rangeStart must be of the same IP family as spec.cidr";

  static final String RANGE_END_FAMILY =
      "!has(self.rangeEnd) || !isCIDR(self.cidr) || !isIP(self.rangeEnd)"
          + " || ip(self.rangeEnd).family() == "
          + POOL_FAMILY;
  static final String RANGE_END_FAMILY_MESSAGE =
      "spec.rangeEnd must be of the same IP family as spec.cidr";

  static final String RANGE_START_INSIDE =
      "!has(self.rangeStart) || !isCIDR(self.cidr) || !isIP(self.rangeStart)"
          + " || cidr(self.cidr).containsIP(self.rangeStart)";
  static final String RANGE_START_INSIDE_MESSAGE = "spec.rangeStart must lie inside spec.cidr";

  static final String RANGE_END_INSIDE =
      "!has(self.rangeEnd) || !isCIDR(self.cidr) || !isIP(self.rangeEnd)"
          + " || cidr(self.cidr).containsIP(self.rangeEnd)";
  static final String RANGE_END_INSIDE_MESSAGE = "spec.rangeEnd must lie inside spec.cidr";

  private static final String EXCLUDE_ENTRY_VALID =
      "(isCIDR(e) && string(cidr(e)) == e && cidr(e).masked() == cidr(e)"
          + " && cidr(self.cidr).containsCIDR(e))"
          + " || (isIP(e) && ip.isCanonical(e) && cidr(self.cidr).containsIP(e))";
  static final String EXCLUDES_INSIDE =
      "!has(self.exclude) || !isCIDR(self.cidr) || self.exclude.all(e, "
          + EXCLUDE_ENTRY_VALID
          + ")";
  static final String EXCLUDES_INSIDE_MESSAGE =
      "'spec.exclude entry \"' + self.exclude.filter(e, !("
          + EXCLUDE_ENTRY_VALID
          + "))[0]"
          + " + '\" must be a canonical address or CIDR (no host bits) inside spec.cidr '"
          + " + self.cidr";

  static final String GATEWAY_INSIDE =
      "!has(self.gateway) || !isCIDR(self.cidr) || !isIP(self.gateway)"
          + " || cidr(self.cidr).containsIP(self.gateway)";
  static final String GATEWAY_INSIDE_MESSAGE = "spec.gateway must lie inside spec.cidr";

  static final String BLOCK_SIZE_NOT_WIDER =
      "!has(self.blockSize) || !isCIDR(self.cidr)"
          + " || self.blockSize >= cidr(self.cidr).prefixLength()";
  static final String BLOCK_SIZE_NOT_WIDER_MESSAGE =
      "spec.blockSize is wider than the pool: it must be a prefix length from that of spec.cidr"
          + " up to the host prefix (32 for IPv4, 128 for IPv6)";

  static final String BLOCK_SIZE_IN_FAMILY =
      "!has(self.blockSize) || !isCIDR(self.cidr)"
          + " || self.blockSize <= ("
          + POOL_FAMILY
          + " == 4 ? 32 : 128)";
  static final String BLOCK_SIZE_IN_FAMILY_MESSAGE =
      "spec.blockSize is longer than an address of the pool's family (at most 32 for IPv4, 128"
          + " for IPv6)";

  static final String ROUTES_VALID =
      "!has(self.routes) || !isCIDR(self.cidr) || self.routes.all(r, isCIDR(r.dst)"
          + " && cidr(r.dst).ip().family() == "
          + POOL_FAMILY
          + " && (!has(r.gw) || (isIP(r.gw) && ip(r.gw).family() == "
          + POOL_FAMILY
          + ")))";
  static final String ROUTES_VALID_MESSAGE =
      "every spec.routes entry needs dst, a CIDR, and optionally gw, an address, both of the"
          + " family of spec.cidr";

  static final String NAME_IS_LABEL =
      "self.metadata.name.size() <= 63"
          + " && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')";
  static final String NAME_IS_LABEL_MESSAGE =
      "metadata.name of an IPPool must be a DNS label (lowercase letters, digits and '-', at most"
          + " 63 characters): it is used as the kipam.io/pool label value";

  private PoolRules() {}

  // Geometry never changes under live blocks: blocks and addresses were carved from the old one.
  static final String CIDR_IMMUTABLE = "self.cidr == oldSelf.cidr";
  static final String CIDR_IMMUTABLE_MESSAGE =
      "spec.cidr is immutable: blocks and addresses were carved from it; create a new pool instead";

  static final String BLOCK_SIZE_IMMUTABLE =
      "has(self.blockSize) == has(oldSelf.blockSize)"
          + " && (!has(self.blockSize) || self.blockSize == oldSelf.blockSize)";
  static final String BLOCK_SIZE_IMMUTABLE_MESSAGE =
      "spec.blockSize is immutable (also setting or unsetting it): nodes hold blocks of the old"
          + " size; create a new pool instead";

  static final String NETWORK_IMMUTABLE =
      "has(self.network) == has(oldSelf.network)"
          + " && (!has(self.network) || self.network == oldSelf.network)";
  static final String NETWORK_IMMUTABLE_MESSAGE =
      "spec.network is immutable (also setting or unsetting it): overlap with other pools was"
          + " checked for the old network; create a new pool instead";
}
