package io.kipam.node.alloc;

import io.kipam.api.v1alpha1.ReleaseState;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The status of the blocks in a {@link FakeStore}, with the API server's rules that matter here: a
 * write to a block that is gone or is another object (UID) does not happen, and a release answer
 * whose resourceVersion is not the block's current one fails as a 409 does. Every change is shown
 * to the holding node's ledger at once and in order, as its block watch would; tests play the
 * operator with {@link #request}, {@link #clear} and {@link #deleteIfReady}.
 */
final class FakeBlockStatus implements BlockStatusStore {

  /** One block's status, and its resourceVersion. */
  record Status(
      long version,
      Long allocated,
      ReleaseState release,
      String requestedAt,
      String respondedAt,
      String reason,
      boolean shared,
      String shareRequestedAt) {
    Status with(
        long version,
        Long allocated,
        ReleaseState release,
        String requestedAt,
        String respondedAt,
        String reason) {
      return new Status(
          version, allocated, release, requestedAt, respondedAt, reason, shared, shareRequestedAt);
    }

    /**
     * This status at {@code version}, with {@code shared} and the share request {@code
     * shareRequestedAt}.
     */
    Status withShare(long version, boolean shared, String shareRequestedAt) {
      return new Status(
          version, allocated, release, requestedAt, respondedAt, reason, shared, shareRequestedAt);
    }
  }

  private static final Status NONE = new Status(0, null, null, null, null, null, false, null);

  private final FakeStore store;
  private final Map<String, Ledger> watchers = new HashMap<>();
  private final Map<BlockRef, Status> statuses = new HashMap<>();
  private long versions;
  final AtomicInteger allocatedWrites = new AtomicInteger();
  final AtomicInteger answers = new AtomicInteger();
  final AtomicInteger conflicts = new AtomicInteger();
  volatile boolean failWrites;

  FakeBlockStatus(FakeStore store) {
    this.store = store;
    store.onClaim = this::show;
  }

  /** A block was claimed: its holder's watch shows it. */
  private synchronized void show(BlockRef ref) {
    Ledger watcher = watchers.get(holder(ref));
    if (watcher != null) {
      watcher.blocks().ownBlockSeen(object(ref));
    }
  }

  /** Shows {@code ledger} every change of its node's blocks, as its block watch does. */
  synchronized void watchedBy(Ledger ledger) {
    watchers.put(ledger.node(), ledger);
  }

  @Override
  public synchronized boolean writeAllocated(BlockObject seen, long allocated) {
    fail();
    BlockRef ref = seen.ref();
    if (holder(ref) == null
        || (!seen.hasStatus()
            && !Long.toString(status(ref).version()).equals(seen.resourceVersion()))) {
      return false;
    }
    allocatedWrites.incrementAndGet();
    Status s = status(ref);
    put(
        ref,
        s.with(++versions, allocated, s.release(), s.requestedAt(), s.respondedAt(), s.reason()));
    return true;
  }

  @Override
  public synchronized String answerRelease(
      BlockRef ref, String resourceVersion, ReleaseAnswer answer) {
    fail();
    Status s = status(ref);
    if (holder(ref) == null || !Long.toString(s.version()).equals(resourceVersion)) {
      conflicts.incrementAndGet();
      return null;
    }
    answers.incrementAndGet();
    Status answered =
        s.with(
            ++versions,
            s.allocated(),
            answer.state(),
            s.requestedAt(),
            answer.respondedAt(),
            answer.reason() == null ? s.reason() : answer.reason());
    put(ref, answered);
    return Long.toString(answered.version());
  }

  /** The operator asks for {@code ref} back; false when it is gone. */
  synchronized boolean request(BlockRef ref, String requestedAt) {
    if (holder(ref) == null) {
      return false;
    }
    Status s = status(ref);
    put(ref, s.with(++versions, s.allocated(), ReleaseState.Requested, requestedAt, null, "idle"));
    return true;
  }

  @Override
  public synchronized boolean writeShared(BlockRef ref, String shareRequestedAt) {
    fail();
    Status s = status(ref);
    if (holder(ref) == null || !shareRequestedAt.equals(s.shareRequestedAt())) {
      conflicts.incrementAndGet();
      return false;
    }
    put(ref, s.withShare(++versions, true, s.shareRequestedAt()));
    FakeStore.Block block = store.blocks.get(ref.name());
    store.blocks.put(
        ref.name(),
        new FakeStore.Block(block.node(), block.uid(), block.parent(), true, block.deleting()));
    return true;
  }

  @Override
  public synchronized boolean requestShare(BlockRef ref, String requestedAt, String reason) {
    fail();
    return requestShare(ref, requestedAt);
  }

  /** The operator asks for the slot {@code ref} to become Shared; false when it is gone. */
  synchronized boolean requestShare(BlockRef ref, String requestedAt) {
    if (holder(ref) == null) {
      return false;
    }
    Status s = status(ref);
    put(ref, s.withShare(++versions, s.shared(), requestedAt));
    return true;
  }

  /** The operator changes its mind: the release is cleared. */
  synchronized void clear(BlockRef ref) {
    if (holder(ref) != null) {
      put(ref, status(ref).with(++versions, status(ref).allocated(), null, null, null, null));
    }
  }

  /**
   * The operator deletes {@code ref} if its status is a fresh Ready (of the round {@code
   * requestedAt}), and the holder's block watch sees it go. Returns whether it did.
   */
  synchronized boolean deleteIfReady(BlockRef ref, String requestedAt) {
    String node = holder(ref);
    Status s = status(ref);
    if (node == null || s.release() != ReleaseState.Ready || !requestedAt.equals(s.requestedAt())) {
      return false;
    }
    store.blocks.remove(ref.name());
    statuses.remove(ref);
    Ledger watcher = watchers.get(node);
    if (watcher != null) {
      watcher.blocks().blockGone(ref);
    }
    return true;
  }

  synchronized Status status(BlockRef ref) {
    return statuses.getOrDefault(ref, NONE);
  }

  /** The block's object as its holder's watch shows it. */
  synchronized BlockObject object(BlockRef ref) {
    Status s = status(ref);
    return new BlockObject(
        ref,
        Long.toString(s.version()),
        statuses.containsKey(ref),
        s.release(),
        s.requestedAt(),
        s.allocated(),
        false,
        s.shared(),
        s.shareRequestedAt());
  }

  /** The node holding {@code ref}, or null when it is gone or another object has its name. */
  private String holder(BlockRef ref) {
    FakeStore.Block block = store.blocks.get(ref.name());
    return block == null || !block.uid().equals(ref.uid()) ? null : block.node();
  }

  private void put(BlockRef ref, Status status) {
    statuses.put(ref, status);
    Ledger watcher = watchers.get(holder(ref));
    if (watcher != null) {
      watcher.blocks().ownBlockSeen(object(ref));
    }
  }

  private void fail() {
    if (failWrites) {
      throw new StoreUnavailableException("API server unreachable (test)", null);
    }
  }
}
