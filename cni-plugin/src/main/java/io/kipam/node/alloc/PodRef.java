package io.kipam.node.alloc;

import java.util.Objects;

/**
 * The pod an address is for: its namespace holds the IPAddress, its UID owns it. The UID is the Pod
 * object's (for a static pod, its mirror Pod's), never one the API does not know.
 */
public record PodRef(String namespace, String name, String uid) {
  public PodRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
  }

  /** Whether {@code other} names the same pod (namespace and name). */
  public boolean sameName(String namespace, String name) {
    return this.namespace.equals(namespace) && this.name.equals(name);
  }
}
