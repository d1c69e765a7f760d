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
      "'spec.cidr must be written canonically, as ' + string(cidr(self))";

  static final String CIDR_NO_HOST_BITS = "!isCIDR(self) || cidr(self).masked() == cidr(self)";
  static final String CIDR_NO_HOST_BITS_MESSAGE =
      "'spec.cidr has host bits set; the network is ' + string(cidr(self).masked())";

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

  /**
   * CEL has no ordering on IP values, so "start after end" is found bit by bit: there is a bit p
   * where both addresses agree on every bit before p and start has a 1 where end has a 0. "start
   * has a 1 at p" is "start masked to p+1 bits differs from start masked to p bits".
   */
  static final String RANGE_ORDERED =
      "!has(self.rangeStart) || !has(self.rangeEnd) || !isIP(self.rangeStart)"
          + " || !isIP(self.rangeEnd)"
          + " || ip(self.rangeStart).family() != ip(self.rangeEnd).family()"
          + " || ![0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,119,120,121,122,123,124,125,126,127].exists(p,"
          + " p < (ip(self.rangeStart).family() == 4 ? 32 : 128)"
          + " && cidr(self.rangeStart + '/' + string(p)).masked().containsIP(self.rangeEnd)"
          + " && !cidr(self.rangeStart + '/' + string(p + 1)).masked().containsIP(self.rangeEnd)"
          + " && cidr(self.rangeStart + '/' + string(p + 1)).masked().ip()"
          + " != cidr(self.rangeStart + '/' + string(p)).masked().ip())";

  static final String RANGE_ORDERED_MESSAGE = "spec.rangeStart must not be after spec.rangeEnd";

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
      "'spec.blockSize /' + string(self.blockSize) + ' is wider than the pool /'"
          + " + string(cidr(self.cidr).prefixLength()) + '; use a prefix length from '"
          + " + string(cidr(self.cidr).prefixLength()) + ' to the host prefix'";

  static final String BLOCK_SIZE_IN_FAMILY =
      "!has(self.blockSize) || !isCIDR(self.cidr)"
          + " || self.blockSize <= ("
          + POOL_FAMILY
          + " == 4 ? 32 : 128)";
  static final String BLOCK_SIZE_IN_FAMILY_MESSAGE =
      "'spec.blockSize /' + string(self.blockSize) + ' is longer than an address of the pool'"
          + " + ' family (/32 for IPv4, /128 for IPv6)'";

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
}
