package io.kipam.node.alloc;

import io.kipam.api.net.IpAddress;
import java.util.Objects;

/** An address of a pool: what must never have two holders, whatever their namespaces. */
public record AddressKey(String pool, IpAddress ip) {
  public AddressKey {
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(ip, "ip");
  }
}
