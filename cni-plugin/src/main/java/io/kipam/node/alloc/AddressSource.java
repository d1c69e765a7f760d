package io.kipam.node.alloc;

import java.util.List;

/**
 * Where the address of one intent comes from (design §5c): dynamic, chosen, claimed. A source finds
 * a candidate and hands it to the {@link AddressGate}, which checks and writes it; a source never
 * writes an IPAddress itself. A new way to get an address is a new source.
 */
interface AddressSource {

  /**
   * An address of {@code family} for {@code request}, written.
   *
   * @param claimedHere where the source adds every block it claims for this call, so that the call
   *     gives back those that stay empty when it fails
   */
  Lease allocate(AddRequest request, AddRequest.Family family, List<BlockRef> claimedHere);
}
