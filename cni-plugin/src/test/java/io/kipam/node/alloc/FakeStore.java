package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory {@link AllocationStore} with the API server's rules that matter here: a create of a
 * name taken <em>in that namespace</em> fails (the same name in another namespace does not
 * collide), a delete with a stale UID does not delete. Several ledgers may share one, as several
 * nodes share one API server. Faults: {@link #failWrites} fails writes before they happen, as an
 * unreachable API server does; {@link #lostAnswers} makes that share of creates happen and then
 * throw, as a timeout or a connection reset after the request was sent does; {@link #rejectCreates}
 * refuses creates as the API does for content it will not take; {@link #lostBlockDeletes} makes
 * block deletes happen and then throw, as a delete whose answer was lost does.
 */
final class FakeStore implements AllocationStore {

  /**
   * IPAddresses a listing of a block returns besides the store's own: a read older than writes that
   * followed it (an object deleted since).
   */
  java.util.function.Function<Cidr, List<Lease>> staleListing = block -> List.of();

  /** A stored IPBlock: its node (null on a slot Shared from birth), and its parent, if any. */
  record Block(String node, String uid, String parent, boolean shared, boolean deleting) {
    Block(String node, String uid) {
      this(node, uid, null, false, false);
    }
  }

  final Map<String, Block> blocks = new ConcurrentHashMap<>();
  final Map<String, Lease> addresses = new ConcurrentHashMap<>();
  final AtomicInteger writes = new AtomicInteger();
  final AtomicInteger answersLost = new AtomicInteger();
  volatile boolean failWrites;
  volatile boolean rejectCreates;
  volatile double lostAnswers;

  /** Creates fail with an unknown outcome without happening, as a request lost on its way does. */
  volatile boolean lostRequests;

  volatile boolean claimsTimeOut;
  volatile boolean lostBlockDeletes;

  /** Sub-claims happen, and then their answer is lost. */
  volatile boolean lostSubClaimAnswers;

  volatile java.util.function.Consumer<BlockRef> onClaim = ref -> {};

  /** Runs as a create of an IPAddress arrives, before it is written. */
  volatile java.util.function.Consumer<Lease> onCreate = lease -> {};

  /** Told of every fresh read of an address, before it answers: a test can hold a reader there. */
  volatile java.util.function.Consumer<Lease> onRead = lease -> {};

  private final Random random = new Random(11);

  @Override
  public String claimBlock(String pool, Cidr block, String node) {
    maybeFail();
    if (claimsTimeOut) {
      // The request never reached the API server, but the client cannot know that.
      throw new WriteOutcomeUnknownException("timeout before the claim was sent (test)", null);
    }
    String uid = UUID.randomUUID().toString();
    if (blocks.putIfAbsent(ResourceNames.blockName(pool, block), new Block(node, uid)) != null) {
      return null;
    }
    onClaim.accept(new BlockRef(pool, block, uid));
    return uid;
  }

  @Override
  public String claimSubClaim(String pool, IpAddress ip, String node, Cidr slot) {
    maybeFail();
    String uid = UUID.randomUUID().toString();
    Cidr host = Cidr.of(ip, ip.family().bits());
    Block block = new Block(node, uid, ResourceNames.blockName(pool, slot), false, false);
    if (blocks.putIfAbsent(ResourceNames.blockName(pool, host), block) != null) {
      return null;
    }
    onClaim.accept(new BlockRef(pool, host, uid));
    if (lostSubClaimAnswers) {
      throw new WriteOutcomeUnknownException("timeout after the sub-claim was sent (test)", null);
    }
    return uid;
  }

  @Override
  public String claimSharedSlot(String pool, Cidr slot) {
    maybeFail();
    String uid = UUID.randomUUID().toString();
    Block block = new Block(null, uid, null, true, false);
    return blocks.putIfAbsent(ResourceNames.blockName(pool, slot), block) == null ? uid : null;
  }

  @Override
  public Optional<SlotState> readSlot(String pool, Cidr slot) {
    if (failWrites) {
      throw new StoreUnavailableException("API server unreachable (test)", null);
    }
    return Optional.ofNullable(blocks.get(ResourceNames.blockName(pool, slot)))
        .map(b -> new SlotState(b.shared() || b.node() == null, b.deleting()));
  }

  @Override
  public void releaseBlock(String pool, Cidr block, String uid) {
    maybeFail();
    blocks.computeIfPresent(
        ResourceNames.blockName(pool, block), (k, b) -> b.uid().equals(uid) ? null : b);
    if (lostBlockDeletes) {
      throw new StoreUnavailableException("no answer to a block delete (test)", null);
    }
  }

  @Override
  public Lease createAddress(Lease lease) {
    onCreate.accept(lease);
    maybeFail();
    if (rejectCreates) {
      throw new RequestRejectedException(422, "spec.containerID: Too long (test)");
    }
    if (lostRequests) {
      throw new WriteOutcomeUnknownException("timeout before the create was sent (test)", null);
    }
    Lease created = lease.withObjectUid(UUID.randomUUID().toString());
    boolean written = addresses.putIfAbsent(key(lease), created) == null;
    if (written && loseThisAnswer()) {
      answersLost.incrementAndGet();
      throw new WriteOutcomeUnknownException("timeout after the request was sent (test)", null);
    }
    return written ? created : null;
  }

  /** Who holds {@code ip} of {@code pool} in any namespace, as a list by name across them finds. */
  @Override
  public Optional<Lease> findAddress(String pool, IpAddress ip) {
    return addresses.values().stream()
        .filter(l -> l.pool().equals(pool) && l.ip().equals(ip))
        .findFirst();
  }

  @Override
  public Optional<Lease> readAddress(Lease lease) {
    onRead.accept(lease);
    if (failWrites) {
      throw new StoreUnavailableException("API server unreachable (test)", null);
    }
    return Optional.ofNullable(addresses.get(key(lease)));
  }

  @Override
  public void deleteAddress(Lease lease) {
    maybeFail();
    addresses.computeIfPresent(
        key(lease), (k, stored) -> stored.objectUid().equals(lease.objectUid()) ? null : stored);
  }

  /** Without finalizers in the fake, the end of an attachment removes its object. */
  @Override
  public void endAttachment(Lease lease) {
    deleteAddress(lease);
  }

  /** Puts an object in the store as another writer would, unknown to every ledger. */
  Lease foreign(Lease lease) {
    Lease stored = lease.withObjectUid(UUID.randomUUID().toString());
    addresses.put(key(lease), stored);
    return stored;
  }

  private synchronized boolean loseThisAnswer() {
    return lostAnswers > 0 && random.nextDouble() < lostAnswers;
  }

  private static String key(Lease lease) {
    return lease.pod().namespace() + "/" + lease.name();
  }

  private void maybeFail() {
    writes.incrementAndGet();
    if (failWrites) {
      throw new StoreUnavailableException("API server unreachable (test)", null);
    }
  }

  /** Listings of a whole pool (not of one slot's sub-claims). */
  final AtomicInteger listings = new AtomicInteger();

  @Override
  public List<ListedBlock> listBlocks(String pool, Cidr parent) {
    if (failWrites) {
      throw new StoreUnavailableException("API server unreachable (test)", null);
    }
    if (parent == null) {
      listings.incrementAndGet();
    }
    String parentName = parent == null ? null : ResourceNames.blockName(pool, parent);
    List<ListedBlock> listed = new ArrayList<>();
    blocks.forEach(
        (name, block) -> {
          ResourceNames.BlockName parsed = ResourceNames.parseBlockName(name);
          if (parsed.pool().equals(pool)
              && (parentName == null || parentName.equals(block.parent()))) {
            listed.add(
                new ListedBlock(
                    parsed.cidr(),
                    block.uid(),
                    block.node(),
                    block.parent(),
                    block.parent() == null && (block.shared() || block.node() == null),
                    block.deleting()));
          }
        });
    return listed;
  }

  /** Listings of the IPAddresses of one block. */
  final AtomicInteger addressListings = new AtomicInteger();

  @Override
  public ListedAddresses listAddresses(String pool, Cidr block) {
    if (failWrites) {
      throw new StoreUnavailableException("API server unreachable (test)", null);
    }
    addressListings.incrementAndGet();
    List<Lease> listed =
        new java.util.ArrayList<>(
            addresses.values().stream()
                .filter(l -> l.pool().equals(pool) && l.block().equals(block))
                .toList());
    listed.addAll(staleListing.apply(block));
    return new ListedAddresses(listed, java.util.Map.of());
  }
}
