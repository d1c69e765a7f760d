package io.kipam.node;

import io.kipam.cni.spec.Attachment;
import io.kipam.cni.spec.CniCommand;
import io.kipam.cni.spec.CniDispatcher;
import io.kipam.cni.spec.CniPlugin;
import io.kipam.cni.spec.CniRequest;
import io.kipam.cni.spec.CniResponse;
import io.kipam.cni.spec.IpamResult;
import io.kipam.cni.spec.NetworkConfig;
import io.kipam.node.alloc.AddRequest;
import io.kipam.node.alloc.AllocationException;
import io.kipam.node.alloc.Allocator;
import io.kipam.node.alloc.ClaimStore;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.alloc.Refusal;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PodSummary;
import io.kipam.node.kube.PoolDemand;
import io.kipam.node.request.AddRequests;
import io.kipam.node.server.CniEndpoint;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CNI verbs on top of the allocator: parses each forwarded call, does what the verb asks, and
 * answers every failure with the CNI error code {@link CniCodes} chooses for it, with a message
 * that says what to do. An ADD is resolved once into an {@link AddRequest} ({@link AddRequests})
 * and served by the {@link Allocator}; a refusal that means this node is short of a pool's
 * addresses records the node's demand for kipam-operator.
 */
public final class CniService implements CniEndpoint, CniPlugin {

  private static final Logger log = LoggerFactory.getLogger(CniService.class);

  private final NodeWatch watch;
  private final Ledger ledger;
  private final Allocator allocator;
  private final BooleanSupplier ready;
  private final Duration gcGrace;
  private final PoolDemand demand;
  private final AddRequests requests;
  private final CniCodes codes;

  /**
   * @param ready what STATUS reports: synced, and every watch running and connected
   * @param claims where IPAMClaims are read
   */
  public CniService(
      NodeWatch watch,
      Ledger ledger,
      Allocator allocator,
      BooleanSupplier ready,
      Duration gcGrace,
      PoolDemand demand,
      ClaimStore claims) {
    this.watch = watch;
    this.ledger = ledger;
    this.allocator = allocator;
    this.ready = ready;
    this.gcGrace = gcGrace;
    this.demand = demand;
    this.requests = new AddRequests(watch, watch::owner, claims, ledger.node());
    this.codes = new CniCodes(ledger.node(), this::attachedToLivePod);
  }

  @Override
  public Answer handle(Map<String, String> env, byte[] stdin) {
    CniResponse response = CniDispatcher.dispatch(env, stdin, this);
    return new Answer(response.exitCode(), response.stdout());
  }

  @Override
  public IpamResult add(CniRequest request) {
    return translated(
        () -> {
          requireWatching();
          List<Lease> leases = allocator.allocate(requests.resolve(request));
          leases.forEach(l -> demand.served(l.pool()));
          return PoolResults.of(leases, watch::poolObject);
        });
  }

  /**
   * Whether the pod of {@code holder} runs: it exists with that UID, is not finished or deleted.
   */
  private boolean attachedToLivePod(Lease holder) {
    Optional<PodSummary> pod = watch.freshPod(holder.pod().namespace(), holder.pod().name());
    return pod.isPresent()
        && pod.get().getMetadata().getUid().equals(holder.pod().uid())
        && pod.get().getMetadata().getDeletionTimestamp() == null
        && !"Succeeded".equals(pod.get().phase())
        && !"Failed".equals(pod.get().phase());
  }

  @Override
  public void del(CniRequest request) {
    translated(
        () -> {
          var args = request.environment().args();
          Optional<Allocator.PodName> pod =
              args.podNamespace().isPresent() && args.podName().isPresent()
                  ? Optional.of(
                      new Allocator.PodName(args.podNamespace().get(), args.podName().get()))
                  : Optional.empty();
          allocator.release(heldOrConfigured(request), attachment(request), pod);
          return null;
        });
  }

  /**
   * The pools a DEL releases in: those the attachment holds an address of (a pool chosen by an
   * annotation need not be in the configuration), and the configuration's.
   */
  private List<String> heldOrConfigured(CniRequest request) {
    Set<String> pools = new LinkedHashSet<>();
    ledger.leasesOf(attachment(request)).forEach(l -> pools.add(l.pool()));
    pools.addAll(request.config().orElseThrow().ipam().pools());
    return List.copyOf(pools);
  }

  @Override
  public void onUnexpected(CniCommand command, RuntimeException e) {
    log.error("{} failed unexpectedly", command, e);
  }

  /**
   * The allocator's and the API's failures, as the CNI errors the runtime acts on. Nothing is
   * looked up, let alone allocated, before the node's watches have synced: until then every verb is
   * "try again later".
   */
  private <T> T translated(PoolStep<T> step) {
    if (!ledger.synced()) {
      throw codes.notSynced();
    }
    try {
      return step.run();
    } catch (Exception e) {
      recordDemand(e);
      throw codes.translate(e);
    }
  }

  /**
   * A refusal that leaves this node short of a pool's addresses (or of a slot's, for a chosen
   * address) is seen by kipam-operator, which makes a slot Shared for this node.
   */
  private void recordDemand(Exception e) {
    if (!(e instanceof Refusal refusal) || refusal.pool().isEmpty()) {
      return;
    }
    boolean blockLimit =
        e instanceof AllocationException a && a.reason() == AllocationException.Reason.BLOCK_LIMIT;
    if (refusal.kind() == Refusal.Kind.SHORT
        || (refusal.kind() == Refusal.Kind.EXHAUSTED && !blockLimit)) {
      String pool = refusal.pool().get();
      refusal
          .slot()
          .ifPresentOrElse(slot -> demand.shortOfSlot(pool, slot), () -> demand.shortOf(pool));
    }
  }

  private void requireWatching() {
    if (!watch.running()) {
      throw codes.watchStopped();
    }
  }

  /** A step that may find a pool unusable or the pod unknown. */
  @FunctionalInterface
  private interface PoolStep<T> {
    T run() throws NodeWatch.PoolNotUsableException, NodeWatch.PodNotOnNodeException;
  }

  @Override
  public void check(CniRequest request) {
    translated(
        () -> {
          verify(request);
          return null;
        });
  }

  private void verify(CniRequest request) {
    NetworkConfig config = request.config().orElseThrow();
    Attachment attachment = attachment(request);
    Set<String> held = new HashSet<>();
    for (Lease lease : ledger.leasesOf(attachment)) {
      held.add(lease.ip().toString());
    }
    if (held.isEmpty()) {
      throw CniCodes.checkMismatch(
          "attachment "
              + attachment.containerId()
              + "/"
              + attachment.ifName()
              + " holds no address of pools "
              + config.ipam().pools(),
          "its IPAddress is gone; the pod needs to be recreated");
    }
    if (config.prevResult().isPresent()) {
      Set<String> previous = new HashSet<>();
      config.prevResult().get().ips().forEach(ip -> previous.add(ip.address().toString()));
      if (!previous.equals(held)) {
        throw CniCodes.checkMismatch(
            "the previous result lists " + previous + " but the attachment holds " + held, "");
      }
    }
  }

  /**
   * Releases this node's addresses of the configuration's network whose attachment is not in {@code
   * cni.dev/valid-attachments}, sparing those younger than the grace period: an ADD may have
   * completed after the runtime computed its list. Other networks' addresses are never touched,
   * even in a pool they share: the list names only this network's attachments.
   */
  @Override
  public void gc(CniRequest request) {
    translated(
        () -> {
          requireWatching();
          return collect(request);
        });
  }

  private Void collect(CniRequest request) {
    NetworkConfig config = request.config().orElseThrow();
    Set<Attachment> valid = new HashSet<>(config.validAttachments().orElse(List.of()));
    int released = 0;
    for (Lease lease : ledger.leases()) {
      boolean inUse = valid.contains(lease.attachment());
      if (!config.name().equals(lease.network()) || inUse || !ledger.olderThan(lease, gcGrace)) {
        continue;
      }
      allocator.release(List.of(lease.pool()), lease.attachment(), Optional.empty());
      released++;
    }
    log.info("GC of network {} released {} addresses", config.name(), released);
    return null;
  }

  @Override
  public void status(CniRequest request) {
    if (!ready.getAsBoolean()) {
      throw codes.notReady();
    }
  }

  private static Attachment attachment(CniRequest request) {
    return request.attachment().orElseThrow();
  }

  private NodeWatch.Owner owner(CniRequest request) throws NodeWatch.PodNotOnNodeException {
    var args = request.environment().args();
    return watch.owner(
        args.podNamespace().orElseThrow(), args.podName().orElseThrow(), args.podUid());
  }
}
