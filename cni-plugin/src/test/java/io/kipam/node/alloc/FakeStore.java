package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory {@link AllocationStore} with the API server's rules that matter here: a create of a
 * taken name fails, a delete with a stale UID does not delete. Several ledgers may share one, as
 * several nodes share one API server. {@link #failWrites} makes writes fail as an unreachable API
 * server would.
 */
final class FakeStore implements AllocationStore {

  final Map<String, String> blocks = new ConcurrentHashMap<>();
  final Map<String, Lease> addresses = new ConcurrentHashMap<>();
  final AtomicInteger writes = new AtomicInteger();
  volatile boolean failWrites;

  @Override
  public boolean claimBlock(String pool, Cidr block, String node) {
    maybeFail();
    return blocks.putIfAbsent(ResourceNames.blockName(pool, block), node) == null;
  }

  @Override
  public Lease createAddress(Lease lease) {
    maybeFail();
    Lease created = lease.withObjectUid(UUID.randomUUID().toString());
    return addresses.putIfAbsent(key(lease), created) == null ? created : null;
  }

  @Override
  public void deleteAddress(Lease lease) {
    maybeFail();
    addresses.computeIfPresent(
        key(lease), (k, stored) -> stored.objectUid().equals(lease.objectUid()) ? null : stored);
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
}
