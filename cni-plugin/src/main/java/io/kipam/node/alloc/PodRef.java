package io.kipam.node.alloc;

import java.util.Objects;

/**
 * The pod an address is for: its namespace holds the IPAddress, its UID names the pod of the
 * attachment. The UID is the Pod object's (for a static pod, its mirror Pod's), never one the API
 * does not know. {@code staticPod}: the pod is a static pod, so the address is held by its Node,
 * not by the mirror Pod (which anyone may delete and kubelet then creates again with a new UID).
 */
public record PodRef(String namespace, String name, String uid, boolean staticPod) {
  public PodRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
  }

  /** A pod that is not a static pod: it holds its addresses itself. */
  public PodRef(String namespace, String name, String uid) {
    this(namespace, name, uid, false);
  }

  /** Whether {@code other} names the same pod (namespace and name). */
  public boolean sameName(String namespace, String name) {
    return this.namespace.equals(namespace) && this.name.equals(name);
  }
}
