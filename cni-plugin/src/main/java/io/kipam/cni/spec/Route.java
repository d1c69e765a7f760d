package io.kipam.cni.spec;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * One entry of a result's {@code routes}: a destination network and, optionally, the next hop of
 * the same family. Without a next hop the main plugin picks its default gateway.
 */
public record Route(Cidr dst, Optional<IpAddress> gw) {

  public Route {
    Objects.requireNonNull(dst, "dst");
    Objects.requireNonNull(gw, "gw");
    gw.ifPresent(
        hop -> {
          if (hop.family() != dst.family()) {
            throw new IllegalArgumentException(
                "route to " + dst + " has next hop " + hop + " of the other family");
          }
        });
  }

  public static Route to(Cidr dst) {
    return new Route(dst, Optional.empty());
  }

  public static Route via(Cidr dst, IpAddress gw) {
    return new Route(dst, Optional.of(gw));
  }
}
