package io.kipam.cni.spec;

import java.util.Objects;

/**
 * One attachment of a container to the network, the key CNI uses for everything a plugin keeps: the
 * container ID and the interface name inside the container (CNI_CONTAINERID, CNI_IFNAME), as also
 * listed in GC's {@code cni.dev/valid-attachments}.
 */
public record Attachment(String containerId, String ifName) {
  public Attachment {
    Objects.requireNonNull(containerId, "containerId");
    Objects.requireNonNull(ifName, "ifName");
  }
}
