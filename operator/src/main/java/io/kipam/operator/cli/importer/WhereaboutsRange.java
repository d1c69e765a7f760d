package io.kipam.operator.cli.importer;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;

/**
 * One range of a whereabouts IPAM configuration, as whereabouts itself reads it: {@code range} (a
 * CIDR, or {@code first-last/prefix}), {@code range_start}, {@code range_end}, {@code exclude}.
 *
 * @param cidr the range's network, as whereabouts names its IPPool after it
 * @param rangeStart null when the range starts at the network
 * @param rangeEnd null when the range ends at the broadcast
 * @param exclude as written (CIDRs)
 * @param gateway null when not set
 */
public record WhereaboutsRange(
    Cidr cidr, IpAddress rangeStart, IpAddress rangeEnd, List<String> exclude, String gateway) {

  /**
   * The name of whereabouts' IPPool of this range (whereabouts' {@code IPPoolName}: the range with
   * ':' and '/' as '-', behind {@code network_name-} when the network has a name).
   */
  public String whereaboutsPoolName(String networkName) {
    String normalized = cidr.toString().replace(':', '-').replace('/', '-');
    return networkName.isEmpty() ? normalized : networkName + "-" + normalized;
  }
}
