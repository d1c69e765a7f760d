package io.kipam.operator.block;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.BlockShare;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.OperatorMetrics;
import io.kipam.operator.kube.AddressLookup;
import io.kipam.operator.kube.Blocks;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.runtime.Checkpoint;
import io.kipam.runtime.client.PreconditionedDelete;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's writes in the release handshake, each guarded so that a stale cache or a restart
 * can never make it take a block from a node:
 *
 * <ul>
 *   <li>status writes ({@code Requested}, clearing a refusal) carry the block's resourceVersion, so
 *       they fail (409) if the daemon wrote anything since the decision was made;
 *   <li>a delete rests on a fresh read of the block straight from the API server, a fresh LIST of
 *       the block's IPAddresses (none may exist), and preconditions on the block's UID and the
 *       resourceVersion that was read, so nothing can change between the check and the delete.
 * </ul>
 *
 * Each write is logged and recorded as an Event on the block.
 */
final class BlockReleaser {

  private static final Logger log = LoggerFactory.getLogger(BlockReleaser.class);

  /** What a guarded delete came to. */
  enum Outcome {
    DELETED,
    /** The block being deleted may go: its finalizer may be removed. */
    MAY_GO,
    /** An IPAddress of the block exists; nothing was deleted. */
    IN_USE,
    /** The block changed or went since the decision; the next reconcile decides again. */
    CHANGED
  }

  private final KubernetesClient client;
  private final AddressLookup addresses;
  private final PreconditionedDelete delete;
  private final EventRecorder events;
  private final OperatorMetrics metrics;

  BlockReleaser(
      KubernetesClient client,
      AddressLookup addresses,
      PreconditionedDelete delete,
      EventRecorder events,
      OperatorMetrics metrics) {
    this.client = client;
    this.addresses = addresses;
    this.delete = delete;
    this.events = events;
    this.metrics = metrics;
  }

  /** Writes {@code Requested}; returns the round (its requestedAt), or empty on a conflict. */
  Optional<String> request(IPBlock block, String reason, Instant now) {
    String round = now.truncatedTo(ChronoUnit.MILLIS).toString();
    BlockRelease release = new BlockRelease();
    release.setState(ReleaseState.Requested);
    release.setRequestedAt(round);
    release.setReason(reason);
    if (!writeRelease(block, release)) {
      return Optional.empty();
    }
    Checkpoint.reach("operator-asked", Blocks.poolOf(block).orElse(""));
    log.info(
        "asked node {} for IPBlock {} (round {}): {}",
        block.getSpec().getNode(),
        block.getMetadata().getName(),
        round,
        reason);
    metrics.release("requested");
    events.record(
        block,
        EventRecorder.Type.Normal,
        "ReleaseRequested",
        "asked node " + block.getSpec().getNode() + " to give the block back: " + reason);
    return Optional.of(round);
  }

  /**
   * Writes {@code status.share}: asks the slot's holder to convert it to Shared. Returns false on a
   * conflict (the slot changed since the decision; the next reconcile decides again).
   */
  boolean requestShare(IPBlock slot, String reason, Instant now) {
    BlockShare share = new BlockShare();
    share.setRequestedAt(now.truncatedTo(ChronoUnit.MILLIS).toString());
    share.setReason(reason);
    IPBlock copy = withShare(client.getKubernetesSerialization(), slot, share);
    Checkpoint.reach("operator-share-deciding", Blocks.poolOf(slot).orElse(""));
    if (!writeStatus(slot, copy)) {
      return false;
    }
    Checkpoint.reach("operator-share-asked", Blocks.poolOf(slot).orElse(""));
    String name = slot.getMetadata().getName();
    String node = slot.getSpec().getNode();
    log.info("asked node {} to convert IPBlock {} to Shared: {}", node, name, reason);
    metrics.conversion("requested");
    events.record(
        slot,
        EventRecorder.Type.Normal,
        "ConversionRequested",
        "asked node " + node + " to make the slot Shared: " + reason);
    return true;
  }

  /**
   * A copy of {@code slot} asking for {@code share}. A slot its holder has not reported on yet has
   * no status: the copy gets one, so a conversion can be asked before the first count.
   */
  static IPBlock withShare(KubernetesSerialization serialization, IPBlock slot, BlockShare share) {
    IPBlock copy = serialization.clone(slot);
    if (copy.getStatus() == null) {
      copy.setStatus(new IPBlockStatus());
    }
    copy.getStatus().setShare(share);
    return copy;
  }

  /** Clears a refused round; returns false on a conflict. */
  boolean clear(IPBlock block, String round) {
    if (!writeRelease(block, null)) {
      return false;
    }
    log.info(
        "cleared the refused release round {} of IPBlock {}", round, block.getMetadata().getName());
    metrics.release("cleared");
    return true;
  }

  /**
   * Whether no sub-claim names {@code slot} as its parent and no IPAddress carries its block label,
   * on fresh reads. The LIST covers every IPBlock, not only those labelled with the pool: a
   * sub-claim is trusted for its {@code spec.parent}, never for its labels. Deleting a Shared slot
   * is rare, so the cost is paid seldom.
   */
  boolean sharedSlotUnused(IPBlock slot) {
    String name = slot.getMetadata().getName();
    boolean subClaims =
        client.resources(IPBlock.class).list().getItems().stream()
            .anyMatch(b -> b.getSpec() != null && name.equals(b.getSpec().getParent()));
    String pool = Blocks.poolOf(slot).orElseThrow();
    return !subClaims && addresses.anyInBlock(pool, Blocks.addressLabel(slot)).isEmpty();
  }

  /**
   * Deletes the block after a fresh read shows {@code stillTrue} of it and no IPAddress of the
   * block exists.
   */
  Outcome deleteIfUnused(IPBlock cached, Predicate<IPBlock> stillTrue) {
    String name = cached.getMetadata().getName();
    IPBlock fresh = client.resources(IPBlock.class).withName(name).get();
    if (fresh == null
        || !fresh.getMetadata().getUid().equals(cached.getMetadata().getUid())
        || fresh.getMetadata().getDeletionTimestamp() != null
        || !stillTrue.test(fresh)) {
      return Outcome.CHANGED;
    }
    String pool = Blocks.poolOf(fresh).orElseThrow();
    if (addresses.anyInBlock(pool, Blocks.addressLabel(fresh)).isPresent()) {
      return Outcome.IN_USE;
    }
    Checkpoint.reach("operator-reread", pool);
    PreconditionedDelete.Outcome outcome =
        delete
            .block(name, fresh.getMetadata().getUid(), fresh.getMetadata().getResourceVersion())
            .outcome();
    if (outcome != PreconditionedDelete.Outcome.DELETED) {
      return Outcome.CHANGED;
    }
    Checkpoint.reach("operator-deleting", pool);
    return Outcome.DELETED;
  }

  /**
   * Whether the block being deleted may go now: a fresh read shows it is still the object, still
   * being deleted and {@code stillTrue}, and no IPAddress of the block exists. Then the finalizer
   * may be removed without a precondition: a block being deleted is closed on its node for good.
   */
  Outcome mayGo(IPBlock cached, Predicate<IPBlock> stillTrue) {
    IPBlock fresh = client.resources(IPBlock.class).withName(cached.getMetadata().getName()).get();
    if (fresh == null
        || !fresh.getMetadata().getUid().equals(cached.getMetadata().getUid())
        || fresh.getMetadata().getDeletionTimestamp() == null
        || !stillTrue.test(fresh)) {
      return Outcome.CHANGED;
    }
    String pool = Blocks.poolOf(fresh).orElseThrow();
    return addresses.anyInBlock(pool, Blocks.addressLabel(fresh)).isPresent()
        ? Outcome.IN_USE
        : Outcome.MAY_GO;
  }

  /** The block as it may be written: a copy of the cached one with {@code release} replaced. */
  private boolean writeRelease(IPBlock block, BlockRelease release) {
    IPBlock copy = client.getKubernetesSerialization().clone(block);
    if (copy.getStatus() == null) {
      copy.setStatus(new IPBlockStatus());
    }
    copy.getStatus().setRelease(release);
    return writeStatus(block, copy);
  }

  private boolean writeStatus(IPBlock block, IPBlock copy) {
    try {
      // The copy carries the cached resourceVersion: the write fails if the block changed since.
      client.resource(copy).updateStatus();
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        log.debug(
            "IPBlock {} changed meanwhile: {}", block.getMetadata().getName(), e.getMessage());
        return false;
      }
      throw e;
    }
  }
}
