package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;

/**
 * One IPBlock object: pool and CIDR give its name, the UID tells it from an object created again
 * under that name (by this node or another), so writes to it carry the UID as precondition.
 */
public record BlockRef(String pool, Cidr cidr, String uid) {

  public String name() {
    return ResourceNames.blockName(pool, cidr);
  }

  /** A host-prefix block (/32 or /128): the block is the allocation. */
  public boolean hostPrefix() {
    return cidr.prefixLength() == cidr.family().bits();
  }
}
