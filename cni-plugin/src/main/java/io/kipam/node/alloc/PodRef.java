package io.kipam.node.alloc;

import java.util.Objects;

/** The pod an address is for: its namespace holds the IPAddress, its UID owns it. */
public record PodRef(String namespace, String name, String uid) {
  public PodRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
  }
}
