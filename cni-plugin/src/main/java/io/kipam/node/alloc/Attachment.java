package io.kipam.node.alloc;

import java.util.Objects;

/**
 * One network attachment of a pod sandbox, as CNI identifies it: the container ID and the interface
 * name inside it. ADD, CHECK and DEL of the same attachment concern the same addresses.
 */
public record Attachment(String containerId, String ifName) {
  public Attachment {
    Objects.requireNonNull(containerId, "containerId");
    Objects.requireNonNull(ifName, "ifName");
  }
}
