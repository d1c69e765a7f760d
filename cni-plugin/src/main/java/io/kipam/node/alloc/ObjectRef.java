package io.kipam.node.alloc;

import java.util.Objects;

/**
 * One IPAddress object, as the API identifies it for its whole life: its namespace and UID. A name
 * is not enough: the same name (pool + address) can exist in several namespaces, and can be created
 * again after a delete.
 */
public record ObjectRef(String namespace, String uid) {
  public ObjectRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(uid, "uid");
  }
}
