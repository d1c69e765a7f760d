package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;

/**
 * The API writes the allocator makes, and nothing else: claims are {@code create}s that the API
 * server refuses when the name is taken, releases are {@code delete}s that succeed when the object
 * is already gone. Implementations throw {@link StoreUnavailableException} for errors worth
 * retrying (API server unreachable, timeouts, throttling).
 */
public interface AllocationStore {

  /** Creates the IPBlock of {@code block}; false when another node already holds it (409). */
  boolean claimBlock(String pool, Cidr block, String node);

  /**
   * Creates the IPAddress of {@code lease}, owned by its pod. Returns the lease with the new
   * object's UID, or null when an object of that name already exists (409).
   */
  Lease createAddress(Lease lease);

  /**
   * Deletes the IPAddress of {@code lease} if it is still the object with {@code
   * lease.objectUid()}; succeeds when it is gone already.
   */
  void deleteAddress(Lease lease);
}
