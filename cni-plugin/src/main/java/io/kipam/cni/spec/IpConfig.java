package io.kipam.cni.spec;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.IpFamily;
import java.util.Objects;
import java.util.Optional;

/**
 * One entry of a result's {@code ips}: an address with the prefix length of the network it lives in
 * (written as CIDR text with host bits, "10.0.0.5/24"), and optionally that network's gateway, of
 * the same family. An IPAM plugin does not know interfaces, so there is no interface index.
 */
public record IpConfig(IpAddress address, int prefixLength, Optional<IpAddress> gateway) {

  public IpConfig {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(gateway, "gateway");
    if (prefixLength < 0 || prefixLength > address.family().bits()) {
      throw new IllegalArgumentException(
          "prefix length "
              + prefixLength
              + " is outside 0-"
              + address.family().bits()
              + " for "
              + address);
    }
    gateway.ifPresent(
        gw -> {
          if (gw.family() != address.family()) {
            throw new IllegalArgumentException(
                "gateway " + gw + " is not of the same family as " + address);
          }
        });
  }

  /**
   * The entry for {@code address} allocated from a pool of network {@code pool}: the address
   * carries the pool's prefix length, so the container learns which addresses are on-link.
   *
   * @param gateway the pool's gateway, or null if it has none
   */
  public static IpConfig inPool(IpAddress address, Cidr pool, IpAddress gateway) {
    if (!pool.contains(address)) {
      throw new IllegalArgumentException(address + " is not inside " + pool);
    }
    return new IpConfig(address, pool.prefixLength(), Optional.ofNullable(gateway));
  }

  public IpFamily family() {
    return address.family();
  }

  /** The network the address is on, e.g. 10.0.0.0/24 for 10.0.0.5/24. */
  public Cidr network() {
    return Cidr.enclosing(address, prefixLength);
  }

  /** The {@code address} field of the result: "10.0.0.5/24". */
  public String addressText() {
    return address + "/" + prefixLength;
  }
}
