package io.kipam.node;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.cni.spec.Attachment;
import io.kipam.cni.spec.CniCommand;
import io.kipam.cni.spec.CniDispatcher;
import io.kipam.cni.spec.CniErrorCode;
import io.kipam.cni.spec.CniException;
import io.kipam.cni.spec.CniPlugin;
import io.kipam.cni.spec.CniRequest;
import io.kipam.cni.spec.CniResponse;
import io.kipam.cni.spec.Dns;
import io.kipam.cni.spec.IpConfig;
import io.kipam.cni.spec.IpamResult;
import io.kipam.cni.spec.NetworkConfig;
import io.kipam.cni.spec.Route;
import io.kipam.node.alloc.AllocationException;
import io.kipam.node.alloc.Allocator;
import io.kipam.node.alloc.ClaimException;
import io.kipam.node.alloc.ClaimStore;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.alloc.RequestRejectedException;
import io.kipam.node.alloc.StaticAddressException;
import io.kipam.node.alloc.StoreUnavailableException;
import io.kipam.node.alloc.WriteOutcomeUnknownException;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PodSummary;
import io.kipam.node.kube.PoolDemand;
import io.kipam.node.request.NetworkSelection;
import io.kipam.node.request.PodIdentity;
import io.kipam.node.request.PoolChoice;
import io.kipam.node.request.StaticRequest;
import io.kipam.node.server.CniEndpoint;
import java.time.Duration;
import java.util.ArrayList;
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
 * maps every failure to a CNI error code with a message that says what to do — a transient API
 * failure, a daemon that has not synced or whose watches are reconnecting, or a pod this node does
 * not know yet is 11 (try again later); an exhausted pool 100; a pool that does not exist, is not
 * Ready or whose selectors exclude the node or namespace 101; a pod identity the API cannot take 4;
 * a request the API refuses 7 with the API server's reason; a bad request the code the CNI spec
 * gives it.
 */
public final class CniService implements CniEndpoint, CniPlugin {

  private static final Logger log = LoggerFactory.getLogger(CniService.class);

  private final NodeWatch watch;
  private final Ledger ledger;
  private final Allocator allocator;
  private final BooleanSupplier ready;
  private final Duration gcGrace;
  private final PoolDemand demand;
  private final ClaimStore claims;
  private final PoolChoice choice;

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
    this.claims = claims;
    this.choice = new PoolChoice(watch);
    this.watch = watch;
    this.ledger = ledger;
    this.allocator = allocator;
    this.ready = ready;
    this.gcGrace = gcGrace;
    this.demand = demand;
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
          NetworkConfig config = request.config().orElseThrow();
          Attachment attachment = attachment(request);
          PodIdentity.validate(request.environment(), config);
          String namespace = request.environment().args().podNamespace().orElseThrow();
          var configured = choice.configured(config.ipam().pools(), namespace);
          NodeWatch.Owner owner = owner(request);
          PodRef pod = owner.ref();
          List<List<PoolView>> families = choice.choose(configured, namespace, owner);
          ClaimStore.Claim claim = claimOf(config, attachment, owner).orElse(null);
          List<IpAddress> statics =
              StaticRequest.of(config, request.environment(), attachment, owner, families);
          List<Lease> leases =
              allocator.allocate(
                  families,
                  attachment,
                  pod,
                  config.name(),
                  config.mac().orElse(null),
                  claim,
                  statics);
          leases.forEach(l -> demand.served(l.pool()));
          return result(leases);
        });
  }

  /**
   * The IPAMClaim the pod names for this attachment: {@code ipam-claim-reference} of the pod's
   * network-selection element whose interface is the call's (design §5b). Checked against the
   * network configuration and the call: the network must allow persistent addresses, the claim must
   * be in the pod's namespace and be for this network and interface.
   */
  private Optional<ClaimStore.Claim> claimOf(
      NetworkConfig config, Attachment attachment, NodeWatch.Owner owner) {
    PodRef pod = owner.ref();
    String selection = owner.annotation(NetworkSelection.ANNOTATION).orElse(null);
    Optional<NetworkSelection.Element> element;
    try {
      element = NetworkSelection.forInterface(selection, attachment.ifName());
    } catch (NetworkSelection.MalformedException e) {
      throw new CniException(
          CniErrorCode.INVALID_NETWORK_CONFIG,
          "pod " + pod.namespace() + "/" + pod.name() + ": " + e.getMessage(),
          "nothing was allocated");
    }
    if (element.isEmpty() || element.get().claim() == null) {
      return config.ipam().statefulSetClaims()
          ? statefulSetClaim(config, attachment, owner)
          : Optional.empty();
    }
    String reference = element.get().claim();
    String namespace = pod.namespace();
    String name = reference;
    int slash = reference.indexOf('/');
    if (slash >= 0) {
      namespace = reference.substring(0, slash);
      name = reference.substring(slash + 1);
    }
    String forPod = forPod(config, attachment, pod, "IPAMClaim " + namespace + "/" + name);
    if (!config.allowPersistentIPs()) {
      throw refused(
          forPod
              + ", but network "
              + config.name()
              + " does not allow persistent addresses: set \"allowPersistentIPs\": true in its"
              + " configuration");
    }
    if (!namespace.equals(pod.namespace())) {
      throw refused(
          forPod
              + ", in another namespace: a claim's address is used only by pods of the claim's"
              + " namespace");
    }
    ClaimStore.Claim claim =
        claims
            .readClaim(namespace, name)
            .orElseThrow(
                () ->
                    new CniException(
                        CniErrorCode.TRY_AGAIN_LATER,
                        forPod + ", which does not exist; nothing was allocated",
                        "create the IPAMClaim (KubeVirt's ipam-extensions makes one per virtual"
                            + " machine and network), then the runtime's retry attaches it"));
    return Optional.of(fitting(claim, config, attachment, forPod));
  }

  /** The claim, when it may serve this call: not being deleted, of its network and interface. */
  private static ClaimStore.Claim fitting(
      ClaimStore.Claim claim, NetworkConfig config, Attachment attachment, String forPod) {
    if (claim.deleting()) {
      throw new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          forPod + ", which is being deleted; nothing was allocated",
          "its address is given back once no pod uses it");
    }
    if (!config.name().equals(claim.network())) {
      throw refused(forPod + ", but the claim is for network " + claim.network());
    }
    if (claim.ifName() != null
        && !claim.ifName().isEmpty()
        && !claim.ifName().equals(attachment.ifName())) {
      throw refused(forPod + ", but the claim is for interface " + claim.ifName());
    }
    return claim;
  }

  private static String forPod(
      NetworkConfig config, Attachment attachment, PodRef pod, String what) {
    return "pod "
        + pod.namespace()
        + "/"
        + pod.name()
        + " names "
        + what
        + " for interface "
        + attachment.ifName()
        + " of network "
        + config.name();
  }

  /** What a claim's name may be: a DNS subdomain. */
  private static final java.util.regex.Pattern CLAIM_NAME =
      java.util.regex.Pattern.compile(
          "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");

  /**
   * The network's StatefulSet option ({@code ipam.statefulSetClaims}): a pod of a StatefulSet uses
   * the claim {@code <pod>.<network>}, which kipam-node makes, owned by the StatefulSet, when it
   * does not exist. Pods of other controllers, and bare pods, are not affected.
   */
  private Optional<ClaimStore.Claim> statefulSetClaim(
      NetworkConfig config, Attachment attachment, NodeWatch.Owner owner) {
    PodRef pod = owner.ref();
    var controller = owner.controller();
    if (controller.isEmpty()
        || !"StatefulSet".equals(controller.get().getKind())
        || !controller.get().getApiVersion().startsWith("apps/")) {
      return Optional.empty();
    }
    String name = pod.name() + "." + config.name();
    String what = "IPAMClaim " + pod.namespace() + "/" + name;
    String forPod =
        "pod "
            + pod.namespace()
            + "/"
            + pod.name()
            + " of StatefulSet "
            + controller.get().getName()
            + " uses "
            + what
            + " for interface "
            + attachment.ifName()
            + " of network "
            + config.name()
            + " (ipam."
            + io.kipam.cni.spec.IpamConfig.STATEFUL_SET_CLAIMS
            + ")";
    if (name.length() > 253 || !CLAIM_NAME.matcher(name).matches()) {
      throw refused(
          forPod
              + ", but that is no valid object name: the network's name must be a DNS subdomain"
              + " for the StatefulSet option");
    }
    ClaimStore.Claim claim =
        claims.ensureClaim(
            pod.namespace(),
            name,
            config.name(),
            attachment.ifName(),
            new ClaimStore.Controller(
                controller.get().getApiVersion(),
                controller.get().getKind(),
                controller.get().getName(),
                controller.get().getUid()),
            ledger.node());
    if (!controller.get().getUid().equals(claim.controllerUid())) {
      throw refused(
          forPod
              + ", but that claim exists and is not this StatefulSet's (its controller has UID "
              + claim.controllerUid()
              + ")");
    }
    return Optional.of(fitting(claim, config, attachment, forPod));
  }

  private static CniException refused(String message) {
    return new CniException(
        CniErrorCode.INVALID_NETWORK_CONFIG, message + "; nothing was allocated", "");
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
      throw new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          "kipam-node on " + ledger.node() + " is still reading its allocations; try again",
          "");
    }
    try {
      return step.run();
    } catch (AllocationException e) {
      if (e.reason() == AllocationException.Reason.POOL_EXHAUSTED
          || e.reason() == AllocationException.Reason.POOL_SHORT) {
        // Seen by kipam-operator, which converts a slot to Shared for this node.
        e.pool().ifPresent(demand::shortOf);
      }
      CniErrorCode code =
          switch (e.reason()) {
            case NOT_READY, POOL_SHORT -> CniErrorCode.TRY_AGAIN_LATER;
            case POOL_EXHAUSTED, BLOCK_LIMIT -> CniErrorCode.POOL_EXHAUSTED;
          };
      throw new CniException(code, e.getMessage(), "");
    } catch (WriteOutcomeUnknownException e) {
      throw new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          "the Kubernetes API did not answer whether the address was written; it stays reserved"
              + " until kipam-node has checked, try again",
          e.getMessage());
    } catch (StoreUnavailableException e) {
      throw new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          "the Kubernetes API is unavailable; nothing was changed, try again",
          e.getMessage());
    } catch (RequestRejectedException e) {
      // 404 on a create in a namespace: the pod's namespace (from K8S_POD_NAMESPACE) is gone.
      CniErrorCode code =
          e.status() == 404
              ? CniErrorCode.INVALID_ENVIRONMENT
              : CniErrorCode.INVALID_NETWORK_CONFIG;
      String details =
          e.status() == 403
              ? "kipam-node on "
                  + ledger.node()
                  + " may not make this write: check the role of its service account"
                  + " (config/rbac) and that NODE_NAME is the Node its token is bound to"
                  + " (config/admission); nothing was allocated"
              : "nothing was allocated";
      throw new CniException(code, e.getMessage(), details);
    } catch (ClaimException e) {
      throw claimRefusal(e);
    } catch (StaticAddressException e) {
      CniErrorCode code =
          switch (e.kind()) {
            case TRY_AGAIN -> CniErrorCode.TRY_AGAIN_LATER;
            case HELD -> CniErrorCode.ADDRESS_HELD;
            case INVALID -> CniErrorCode.INVALID_NETWORK_CONFIG;
          };
      if (e.kind() == StaticAddressException.Kind.TRY_AGAIN && e.pool().isPresent()) {
        if (e.slot().isPresent()) {
          demand.shortOfSlot(e.pool().get(), e.slot().get());
        } else {
          demand.shortOf(e.pool().get());
        }
      }
      throw new CniException(code, e.getMessage(), "nothing was allocated");
    } catch (NodeWatch.PoolNotUsableException e) {
      throw new CniException(CniErrorCode.POOL_NOT_AVAILABLE, e.getMessage(), "");
    } catch (NodeWatch.PodNotOnNodeException e) {
      throw new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          e.getMessage() + " on node " + ledger.node() + "; nothing was allocated",
          "an address is owned by its Pod object, so kipam-node allocates only for a Pod bound to"
              + " this node with the runtime's K8S_POD_UID (or its mirror Pod); try again once the"
              + " Pod exists");
    }
  }

  /**
   * An IPAMClaim that cannot be attached as asked. Its address attached to another pod is "try
   * again" while that pod is gone, finished or being deleted (its attachment is ending), and {@link
   * CniErrorCode#CLAIM_IN_USE} while it runs.
   */
  private CniException claimRefusal(ClaimException e) {
    return switch (e.kind()) {
      case TRY_AGAIN -> new CniException(CniErrorCode.TRY_AGAIN_LATER, e.getMessage(), "");
      case INVALID -> refused(e.getMessage());
      case IN_USE -> {
        Lease holder = e.holder().orElseThrow();
        Optional<PodSummary> pod = watch.freshPod(holder.pod().namespace(), holder.pod().name());
        boolean live =
            pod.isPresent()
                && pod.get().getMetadata().getUid().equals(holder.pod().uid())
                && pod.get().getMetadata().getDeletionTimestamp() == null
                && !"Succeeded".equals(pod.get().phase())
                && !"Failed".equals(pod.get().phase());
        yield live
            ? new CniException(
                CniErrorCode.CLAIM_IN_USE,
                e.getMessage()
                    + ", which is running: an IPAMClaim's address is attached to one pod at a"
                    + " time (live migration is not supported); nothing was allocated",
                "")
            : new CniException(
                CniErrorCode.TRY_AGAIN_LATER,
                e.getMessage()
                    + ", whose attachment is ending (the pod is gone, finished or being deleted);"
                    + " nothing was allocated, try again",
                "");
      }
    };
  }

  private void requireWatching() {
    if (!watch.running()) {
      throw new CniException(
          CniErrorCode.TRY_AGAIN_LATER,
          "the Kubernetes API is unavailable: a watch of kipam-node on "
              + ledger.node()
              + " has stopped; try again",
          "");
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
      throw new CniException(
          CniErrorCode.CHECK_MISMATCH,
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
        throw new CniException(
            CniErrorCode.CHECK_MISMATCH,
            "the previous result lists " + previous + " but the attachment holds " + held,
            "");
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
      throw new CniException(
          CniErrorCode.PLUGIN_NOT_AVAILABLE,
          "kipam-node on " + ledger.node() + " is not ready",
          "it has not finished reading its allocations, or a watch of the API is reconnecting");
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

  private IpamResult result(List<Lease> leases) {
    List<IpConfig> ips = new ArrayList<>();
    List<Route> routes = new ArrayList<>();
    List<IpAddress> nameservers = new ArrayList<>();
    Optional<String> domain = Optional.empty();
    List<String> search = new ArrayList<>();
    List<String> options = new ArrayList<>();
    for (Lease lease : leases) {
      IPPool pool = watch.poolObject(lease.pool());
      var spec = pool.getSpec();
      IpAddress gateway = spec.getGateway() == null ? null : IpAddress.parse(spec.getGateway());
      ips.add(IpConfig.inPool(lease.ip(), Cidr.parse(spec.getCidr()), gateway));
      if (spec.getRoutes() != null) {
        for (var r : spec.getRoutes()) {
          routes.add(
              new Route(
                  Cidr.parse(r.getDst()), Optional.ofNullable(r.getGw()).map(IpAddress::parse)));
        }
      }
      if (spec.getDns() != null) {
        var dns = spec.getDns();
        if (dns.getNameservers() != null) {
          dns.getNameservers().forEach(n -> nameservers.add(IpAddress.parseLenient(n)));
        }
        if (dns.getDomain() != null && domain.isEmpty()) {
          domain = Optional.of(dns.getDomain());
        }
        if (dns.getSearch() != null) {
          search.addAll(dns.getSearch());
        }
        if (dns.getOptions() != null) {
          options.addAll(dns.getOptions());
        }
      }
    }
    return new IpamResult(ips, routes, new Dns(nameservers, domain, search, options));
  }
}
