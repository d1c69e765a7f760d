package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The API calls the allocator makes, and nothing else: claims are {@code create}s that the API
 * server refuses when the name is taken, releases are {@code delete}s with a UID precondition that
 * succeed when the object is already gone, and a fresh read settles what an uncertain write did.
 *
 * <p>Writes throw {@link StoreUnavailableException} when they certainly did not happen (nothing
 * reached the API server, or it refused to process the request: 429), {@link
 * WriteOutcomeUnknownException} when they may have happened, and {@link RequestRejectedException}
 * when the API server refused the request's content.
 */
public interface AllocationStore {

  /**
   * Creates the IPBlock of {@code block}; returns the new object's UID, or null when another node
   * already holds it (409).
   */
  String claimBlock(String pool, Cidr block, String node);

  /**
   * Deletes the IPBlock of {@code block} if it is still the object with {@code uid} and, as its
   * holder, lets it go (its {@code kipam.io/block-protection} finalizer). A failure after the
   * delete is a {@link StoreUnavailableException}: the block is closed for good either way.
   */
  void releaseBlock(String pool, Cidr block, String uid);

  /**
   * Creates the IPAddress of {@code lease}, owned by its holder (its pod, or for a static pod its
   * Node) and born with the finalizer {@code kipam.io/attachment}. Returns the lease with the new
   * object's UID, or null when an object of that name already exists in that namespace (409).
   */
  Lease createAddress(Lease lease);

  /**
   * An IPAddress of {@code ip} of {@code pool} in any namespace, read straight from the API server:
   * who holds a chosen address, for the refusal's message. Empty when there is none (or it cannot
   * be told).
   */
  default Optional<Lease> findAddress(String pool, IpAddress ip) {
    return Optional.empty();
  }

  /**
   * Reads the IPAddress of {@code lease}'s name in its pod's namespace straight from the API server
   * (not from a cache); empty when there is none.
   */
  Optional<Lease> readAddress(Lease lease);

  /**
   * Deletes the IPAddress of {@code lease} if it is still the object with {@code
   * lease.objectUid()}, and ends its attachment (removes {@code kipam.io/attachment} from it);
   * succeeds when it is gone already. Only once both are done is the address free.
   */
  void deleteAddress(Lease lease);

  /**
   * Ends the attachment of the IPAddress of {@code lease}, which someone else has deleted: removes
   * {@code kipam.io/attachment} from the object {@code lease.objectUid()} if it is still being
   * deleted and carries it; succeeds when there is nothing to do.
   */
  void endAttachment(Lease lease);

  /**
   * Creates the sub-claim of {@code ip} (a host-prefix IPBlock with {@code spec.parent}) in the
   * slot {@code slot} of {@code pool}, held by {@code node}; returns the new object's UID, or null
   * when someone holds the address already (409).
   */
  String claimSubClaim(String pool, IpAddress ip, String node, Cidr slot);

  /**
   * Claims {@code slot} Shared from birth: creates it without {@code spec.node}, then writes {@code
   * status.mode: Shared} for readers (the absent node already makes it Shared, so a failure of that
   * second write is only logged). Returns the new object's UID, or null when someone holds the slot
   * (409).
   */
  String claimSharedSlot(String pool, Cidr slot);

  /** The state of a slot, read straight from the API server (not from a cache). */
  record SlotState(boolean shared, boolean deleting) {}

  /** Reads the slot {@code slot} of {@code pool} afresh; empty when it does not exist. */
  Optional<SlotState> readSlot(String pool, Cidr slot);

  /**
   * An IPBlock as a listing shows it: its range, UID, holder ({@code spec.node}, null for a slot
   * Shared from birth), parent slot's name (null unless a sub-claim), whether it is a Shared slot
   * and whether it is being deleted.
   */
  record ListedBlock(
      Cidr cidr, String uid, String node, String parent, boolean shared, boolean deleting) {}

  /**
   * Every IPBlock of {@code pool}, slots and sub-claims of every node, read straight from the API
   * server page by page; with {@code parent} given, only the sub-claims under that slot.
   */
  List<ListedBlock> listBlocks(String pool, Cidr parent);

  /**
   * The IPAddresses a listing found: those it could read, and those it could not (their address
   * told by their name), each taken while it exists.
   */
  record ListedAddresses(List<Lease> readable, Map<ObjectRef, AddressKey> unreadable) {
    public boolean isEmpty() {
      return readable.isEmpty() && unreadable.isEmpty();
    }
  }

  /**
   * Every IPAddress of {@code pool} labelled with the block {@code block}, in any namespace, read
   * straight from the API server page by page: what a slot holds that its new holder did not write
   * (its former block deleted by hand, bypassing the block's finalizer).
   */
  ListedAddresses listAddresses(String pool, Cidr block);
}
