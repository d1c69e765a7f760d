package io.kipam.operator.pool;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.runtime.client.PreconditionedDelete;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps of deleting a pool that {@code kipam.io/pool-protection} holds back: while any
 * IPAddress of the pool exists (asked of the API server, never a cache), nothing happens; once none
 * does, the pool's IPBlocks are deleted. Each of them then goes through the release handshake like
 * any block being deleted ({@code kipam.io/block-protection}): closed by its holder, answered
 * {@code Ready}, checked afresh. Once no block of the pool is left, the addresses are asked for
 * once more, since a daemon that had not yet seen the deletion may have allocated meanwhile. Only
 * then may the finalizer go.
 */
final class PoolDeletion {

  private static final Logger log = LoggerFactory.getLogger(PoolDeletion.class);

  /**
   * @param waitingFor what keeps the pool, when something does
   */
  record Step(Optional<String> waitingFor) {}

  private final KubernetesClient client;
  private final AddressLookup addresses;
  private final PreconditionedDelete delete;

  PoolDeletion(KubernetesClient client, AddressLookup addresses, PreconditionedDelete delete) {
    this.client = client;
    this.addresses = addresses;
    this.delete = delete;
  }

  Step advance(IPPool pool, Collection<IPBlock> cachedBlocks) {
    String name = pool.getMetadata().getName();
    Optional<String> holder = addresses.anyInPool(name);
    if (holder.isPresent()) {
      return new Step(Optional.of(waiting(holder.get())));
    }
    // The cache and a fresh list together: a block claimed a moment ago may not be cached yet.
    Map<String, IPBlock> blocks = new LinkedHashMap<>();
    cachedBlocks.forEach(b -> blocks.put(b.getMetadata().getUid(), b));
    client
        .resources(IPBlock.class)
        .withLabel(ApiConstants.LABEL_POOL, name)
        .list()
        .getItems()
        .forEach(b -> blocks.put(b.getMetadata().getUid(), b));
    int left = 0;
    String oneLeft = null;
    for (IPBlock block : blocks.values()) {
      if (!Blocks.belongsTo(block, pool)) {
        continue;
      }
      left++;
      oneLeft = block.getMetadata().getName();
      if (block.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      PreconditionedDelete.Outcome outcome =
          delete.block(block.getMetadata().getName(), block.getMetadata().getUid(), null).outcome();
      if (outcome == PreconditionedDelete.Outcome.DELETED) {
        log.info(
            "deleting IPBlock {} of IPPool {}, which is being deleted and has no IPAddress left",
            block.getMetadata().getName(),
            name);
      }
    }
    if (left > 0) {
      return new Step(
          Optional.of(
              "waiting for "
                  + left
                  + " IPBlocks (e.g. "
                  + oneLeft
                  + ") to be given back by their nodes"));
    }
    holder = addresses.anyInPool(name);
    return new Step(holder.map(PoolDeletion::waiting));
  }

  private static String waiting(String holder) {
    return "waiting for the pool's IPAddresses to be deleted (" + holder + " and perhaps more)";
  }
}
