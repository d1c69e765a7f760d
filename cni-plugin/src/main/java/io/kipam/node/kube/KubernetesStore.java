package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.api.v1alpha1.SlotModes;
import io.kipam.node.alloc.AddressKey;
import io.kipam.node.alloc.AllocationStore;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.ObjectRef;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.RequestRejectedException;
import io.kipam.node.alloc.StoreUnavailableException;
import io.kipam.node.alloc.WriteOutcomeUnknownException;
import io.kipam.runtime.client.PreconditionedDelete;
import io.kipam.runtime.client.TokenBucket;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link AllocationStore} on the Kubernetes API: a block claim creates an IPBlock owned by its
 * pool, an allocation creates an IPAddress owned by its holder (its pod, or a static pod's Node)
 * and born with the finalizer {@code kipam.io/attachment}, and a release deletes the IPAddress with
 * its UID as precondition and then removes that finalizer. 409 on create means "taken".
 *
 * <p>Failures are sorted by what they say about the write: a connection that was never made, or a
 * 429, means nothing was written ({@link StoreUnavailableException}); a timeout, a connection lost
 * after the request went out, or a 5xx may follow a write that happened ({@link
 * WriteOutcomeUnknownException}); 400, 404 and 422 refuse the request's content, 403 the caller
 * (kipam-node's role, or the admission policy when NODE_NAME is not the Node its token is bound to)
 * ({@link RequestRejectedException}, with the API server's reason). Anything else propagates as it
 * is.
 */
public final class KubernetesStore implements AllocationStore {

  private static final Logger log = LoggerFactory.getLogger(KubernetesStore.class);

  private static final Pattern LABEL_VALUE =
      Pattern.compile("^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$");

  private final KubernetesClient client;
  private final String node;
  private final Function<String, String> poolUid;
  final TokenBucket limiter;
  private final Supplier<String> nodeUid;
  private final PreconditionedDelete deletes;
  private final ApiTraffic traffic;

  /**
   * @param node this daemon's node: the creator kipam.io/created-by names on the objects without
   *     spec.node it creates (admission admits no other)
   * @param poolUid the UID of an IPPool by name, from the node's pool cache (null if unknown)
   * @param nodeUid the UID of this node's Node object, from the node's watch (null if unknown): the
   *     holder of a static pod's addresses
   */
  public KubernetesStore(
      KubernetesClient client,
      String node,
      Function<String, String> poolUid,
      TokenBucket limiter,
      Supplier<String> nodeUid,
      ApiTraffic traffic) {
    this.client = client;
    this.node = node;
    this.poolUid = poolUid;
    this.limiter = limiter;
    this.nodeUid = nodeUid;
    this.traffic = traffic;
    this.deletes = new PreconditionedDelete(client);
  }

  @Override
  public String claimBlock(String pool, Cidr block, String node) {
    return createBlock(
        new IPBlockSpec(pool, block.toString(), node),
        Map.of(
            ApiConstants.LABEL_POOL, pool,
            ApiConstants.LABEL_NODE, node,
            ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block)),
        "claim block ");
  }

  @Override
  public String claimSubClaim(String pool, IpAddress ip, String node, Cidr slot) {
    Cidr host = Cidr.of(ip, ip.family().bits());
    return createBlock(
        IPBlockSpec.subClaim(pool, host.toString(), node, ResourceNames.blockName(pool, slot)),
        Map.of(
            ApiConstants.LABEL_POOL,
            pool,
            ApiConstants.LABEL_NODE,
            node,
            ApiConstants.LABEL_BLOCK,
            ResourceNames.blockLabel(host),
            ApiConstants.LABEL_PARENT,
            ResourceNames.blockLabel(slot)),
        "sub-claim ");
  }

  @Override
  public String claimSharedSlot(String pool, Cidr slot) {
    String uid =
        createBlock(
            new IPBlockSpec(pool, slot.toString(), null),
            Map.of(
                ApiConstants.LABEL_POOL,
                pool,
                ApiConstants.LABEL_BLOCK,
                ResourceNames.blockLabel(slot),
                ApiConstants.LABEL_CREATED_BY,
                node),
            "claim Shared slot ");
    if (uid == null) {
      return null;
    }
    String name = ResourceNames.blockName(pool, slot);
    try {
      limiter.acquire();
      client
          .resources(IPBlock.class)
          .withName(name)
          .subresource("status")
          .patch(
              PatchContext.of(PatchType.JSON),
              Serialization.asJson(
                  List.of(
                      Map.of("op", "test", "path", "/metadata/uid", "value", uid),
                      Map.of(
                          "op",
                          "add",
                          "path",
                          "/status",
                          "value",
                          Map.of("mode", BlockMode.Shared.name())))));
    } catch (KubernetesClientException | StoreUnavailableException e) {
      // The slot has no spec.node, which makes it Shared for every reader already.
      log.warn("claimed slot {} Shared from birth but cannot write its status.mode: {}", name, e);
    }
    return uid;
  }

  @Override
  public Optional<SlotState> readSlot(String pool, Cidr slot) {
    String name = ResourceNames.blockName(pool, slot);
    IPBlock fresh;
    try {
      limiter.acquire();
      fresh = client.resources(IPBlock.class).withName(name).get();
    } catch (KubernetesClientException e) {
      throw translate("read IPBlock " + name, e, false);
    }
    return Optional.ofNullable(fresh).map(KubernetesStore::slotState);
  }

  /** Blocks per page of {@link #listBlocks}: a pool of a few thousand blocks in a few requests. */
  static final long LIST_PAGE = 500;

  /** How often one listing starts over after its continue token expired (410) before giving up. */
  private static final int LIST_RESTARTS = 3;

  @Override
  public List<ListedBlock> listBlocks(String pool, Cidr parent) {
    List<ListedBlock> listed = new ArrayList<>();
    listPaged(
        "list the IPBlocks of IPPool " + pool,
        options -> {
          var query = client.resources(IPBlock.class).withLabel(ApiConstants.LABEL_POOL, pool);
          if (parent != null) {
            query = query.withLabel(ApiConstants.LABEL_PARENT, ResourceNames.blockLabel(parent));
          }
          return query.list(options);
        },
        listed::clear,
        block -> listed(block).ifPresent(listed::add));
    return listed;
  }

  @Override
  public ListedAddresses listAddresses(String pool, Cidr block) {
    List<Lease> readable = new ArrayList<>();
    Map<ObjectRef, AddressKey> unreadable = new HashMap<>();
    listPaged(
        "list the IPAddresses of block " + block + " of IPPool " + pool,
        options ->
            client
                .resources(IPAddress.class)
                .inAnyNamespace()
                .withLabel(ApiConstants.LABEL_POOL, pool)
                .withLabel(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block))
                .list(options),
        () -> {
          readable.clear();
          unreadable.clear();
        },
        address -> {
          try {
            readable.add(Leases.from(address));
          } catch (RuntimeException e) {
            Leases.address(address).ifPresent(key -> unreadable.put(Leases.object(address), key));
          }
        });
    return new ListedAddresses(readable, unreadable);
  }

  /**
   * Lists page by page ({@link #LIST_PAGE} a page) straight from the API server, handing each item
   * to {@code each}; when a continue token expires (410) the listing starts over, after {@code
   * restart} forgot what the first pages gave, at most {@link #LIST_RESTARTS} times.
   */
  private <T extends HasMetadata> void listPaged(
      String what,
      java.util.function.Function<ListOptions, KubernetesResourceList<T>> page,
      Runnable restart,
      java.util.function.Consumer<T> each) {
    for (int restarts = 0; ; restarts++) {
      String token = null;
      try {
        do {
          limiter.acquire();
          KubernetesResourceList<T> items =
              page.apply(new ListOptionsBuilder().withLimit(LIST_PAGE).withContinue(token).build());
          traffic.listingPage(items.getItems().size());
          items.getItems().forEach(each);
          token = items.getMetadata() == null ? null : items.getMetadata().getContinue();
        } while (token != null && !token.isEmpty());
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 410 && restarts < LIST_RESTARTS) {
          log.info("the continue token of a listing expired ({}); listing again", what);
          restart.run();
          continue;
        }
        throw translate(what, e, false);
      }
    }
  }

  /** A block as a listing reports it; empty for one whose range cannot be read (logged). */
  private static Optional<ListedBlock> listed(IPBlock block) {
    try {
      return Optional.of(
          new ListedBlock(
              Cidr.parse(block.getSpec().getCidr()),
              block.getMetadata().getUid(),
              block.getSpec().getNode(),
              block.getSpec().getParent(),
              SlotModes.shared(block),
              block.getMetadata().getDeletionTimestamp() != null));
    } catch (RuntimeException unreadable) {
      log.warn(
          "IPBlock {} cannot be read ({}); left out of the listing",
          block.getMetadata().getName(),
          unreadable.toString());
      return Optional.empty();
    }
  }

  /** This daemon's node, the creator of the objects without spec.node it creates. */
  String node() {
    return node;
  }

  static SlotState slotState(IPBlock block) {
    return new SlotState(
        SlotModes.shared(block), block.getMetadata().getDeletionTimestamp() != null);
  }

  /** Creates an IPBlock owned by its pool and born protected; returns its UID, or null on 409. */
  String createBlock(IPBlockSpec spec, Map<String, String> labels, String what) {
    IPBlock object = new IPBlock();
    String pool = spec.getPool();
    String uid = poolUid.apply(pool);
    var meta =
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, Cidr.parse(spec.getCidr())))
            // Born protected: whoever deletes it, it stays until its holder has given it back.
            .withFinalizers(ApiConstants.FINALIZER_BLOCK_PROTECTION)
            .withLabels(labels);
    if (uid != null) {
      meta.withOwnerReferences(
          new OwnerReferenceBuilder()
              .withApiVersion(ApiConstants.API_VERSION)
              .withKind(IPPool.KIND)
              .withName(pool)
              .withUid(uid)
              .withBlockOwnerDeletion(false)
              .build());
    }
    object.setMetadata(meta.build());
    object.setSpec(spec);
    try {
      limiter.acquire();
      return client.resource(object).create().getMetadata().getUid();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return null;
      }
      throw translate(what + object.getMetadata().getName(), e, true);
    }
  }

  /**
   * Deletes this node's block and, as its holder that has found it empty, removes its {@code
   * kipam.io/block-protection} finalizer, so the block goes without a round with the operator.
   */
  @Override
  public void releaseBlock(String pool, Cidr block, String uid) {
    String name = ResourceNames.blockName(pool, block);
    Optional<String> answer =
        delete(() -> deletes.block(name, uid, null), "delete IPBlock " + name);
    try {
      removeProtection(name, uid, answer.flatMap(KubernetesStore::blockIn).orElse(null));
    } catch (RuntimeException e) {
      // The block is being deleted, so closed for good: the caller keeps it retired and tries
      // again, never opens it.
      throw new StoreUnavailableException(
          "deleted IPBlock " + name + " but cannot remove its finalizer yet: " + e.getMessage(), e);
    }
  }

  /** The IPBlock a delete answered with (the object its finalizer keeps), if that is what it is. */
  private static Optional<IPBlock> blockIn(String answer) {
    try {
      Map<?, ?> object = Serialization.unmarshal(answer, Map.class);
      return IPBlock.KIND.equals(object.get("kind"))
          ? Optional.of(Serialization.unmarshal(answer, IPBlock.class))
          : Optional.empty();
    } catch (RuntimeException unreadable) {
      return Optional.empty(); // read afresh instead
    }
  }

  /**
   * Removes this node's finalizer from the block object {@code uid} once it is being deleted (see
   * {@link #removeFinalizer}).
   */
  private void removeProtection(String name, String uid, IPBlock deleted) {
    removeFinalizer(
        client.resources(IPBlock.class).withName(name),
        "IPBlock " + name,
        uid,
        ApiConstants.FINALIZER_BLOCK_PROTECTION,
        deleted);
  }

  /**
   * Removes {@code finalizer} from the object {@code uid} once it is being deleted: a patch with
   * the resourceVersion of {@code known} (an answer the caller has) or, without it or after a
   * conflict, of a fresh read. Nothing to do when the object is gone, is another object now, is not
   * being deleted or no longer carries the finalizer.
   */
  private <T extends HasMetadata> void removeFinalizer(
      Resource<T> resource, String what, String uid, String finalizer, T known) {
    T fresh = known;
    for (int attempt = 0; attempt < 5; attempt++) {
      if (fresh == null) {
        try {
          fresh = resource.get();
        } catch (KubernetesClientException e) {
          throw translate("read " + what, e, false);
        }
      }
      if (fresh == null
          || !uid.equals(fresh.getMetadata().getUid())
          || fresh.getMetadata().getDeletionTimestamp() == null
          || !fresh.getMetadata().getFinalizers().contains(finalizer)) {
        return;
      }
      List<String> rest = new ArrayList<>(fresh.getMetadata().getFinalizers());
      rest.remove(finalizer);
      Map<String, Object> patch =
          Map.of(
              "metadata",
              Map.of(
                  "resourceVersion", fresh.getMetadata().getResourceVersion(), "finalizers", rest));
      try {
        limiter.acquire();
        // Through the object in hand: a patch of a bare name would read it afresh first.
        client
            .resource(fresh)
            .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return;
        }
        if (e.getCode() != 409) {
          throw translate("remove the finalizer " + finalizer + " of " + what, e, false);
        }
        fresh = null;
      }
    }
    throw new StoreUnavailableException(
        "cannot remove the finalizer " + finalizer + " of " + what + ": it kept changing", null);
  }

  @Override
  public Lease createAddress(Lease lease) {
    IPAddress object = addressObject(lease);
    try {
      limiter.acquire();
      IPAddress created = client.resource(object).create();
      return lease.withObjectUid(created.getMetadata().getUid());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return null;
      }
      throw translate("create IPAddress " + lease.pod().namespace() + "/" + lease.name(), e, true);
    }
  }

  private IPAddress addressObject(Lease lease) {
    Map<String, String> labels = new HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, lease.pool());
    labels.put(ApiConstants.LABEL_NODE, lease.node());
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(lease.block()));
    if (LABEL_VALUE.matcher(lease.network()).matches()) {
      // A CNI network name need not be a valid label value; spec.network always has it.
      labels.put(ApiConstants.LABEL_NETWORK, lease.network());
    }
    IPAddress object = new IPAddress();
    object.setMetadata(
        new ObjectMetaBuilder()
            .withName(lease.name())
            .withNamespace(lease.pod().namespace())
            .withLabels(labels)
            // The address stays taken until its attachment is over, whoever deletes the object.
            .withFinalizers(ApiConstants.FINALIZER_ATTACHMENT)
            .withOwnerReferences(holder(lease))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(lease.ip().toString());
    spec.setPool(lease.pool());
    spec.setBlock(lease.blockName());
    spec.setNode(lease.node());
    spec.setNetwork(lease.network());
    spec.setPod(new PodReference(lease.pod().name(), lease.pod().uid()));
    spec.setContainerID(lease.attachment().containerId());
    spec.setInterfaceName(lease.attachment().ifName());
    spec.setMac(lease.mac());
    spec.setClaim(lease.claim());
    object.setSpec(spec);
    return object;
  }

  /**
   * The owner reference of an address's holder: its Pod, or for a static pod its Node (a mirror Pod
   * is created again with a new UID whenever someone deletes it, and the garbage collector would
   * then take the address of a sandbox that still runs).
   */
  private OwnerReference holder(Lease lease) {
    PodRef pod = lease.pod();
    if (!pod.staticPod()) {
      return owner("Pod", pod.name(), pod.uid());
    }
    return nodeHolder(lease.node(), pod.namespace() + "/" + pod.name());
  }

  /** The owner reference of this node's Node, holder of static pod {@code pod}'s addresses. */
  private OwnerReference nodeHolder(String node, String pod) {
    String uid = nodeUid.get();
    if (uid == null) {
      throw new StoreUnavailableException(
          "the Node object, holder of static pod " + pod + "'s addresses, is not known yet", null);
    }
    return owner("Node", node, uid);
  }

  private static OwnerReference owner(String kind, String name, String uid) {
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind(kind)
        .withName(name)
        .withUid(uid)
        .withController(true)
        .withBlockOwnerDeletion(false)
        .build();
  }

  @Override
  public Optional<Lease> findAddress(String pool, IpAddress ip) {
    try {
      limiter.acquire();
      return client
          .resources(IPAddress.class)
          .inAnyNamespace()
          .withField("metadata.name", ResourceNames.addressName(pool, ip))
          .list()
          .getItems()
          .stream()
          .findFirst()
          .map(Leases::from);
    } catch (KubernetesClientException | IllegalArgumentException e) {
      log.info("cannot tell who holds {} of pool {}: {}", ip, pool, e.toString());
      return Optional.empty();
    }
  }

  @Override
  public Optional<Lease> readAddress(Lease lease) {
    try {
      // A GET without resourceVersion is served from etcd with a quorum read, never a cache.
      IPAddress found =
          client
              .resources(IPAddress.class)
              .inNamespace(lease.pod().namespace())
              .withName(lease.name())
              .get();
      return Optional.ofNullable(found).map(Leases::from);
    } catch (KubernetesClientException e) {
      throw translate("read IPAddress " + lease.pod().namespace() + "/" + lease.name(), e, false);
    }
  }

  /**
   * Deletes the IPAddress (UID precondition), then ends its attachment: removes {@code
   * kipam.io/attachment} from the deleted object, so the address is free. Two writes; the second
   * failing leaves the object Terminating and the DEL failed, so the runtime's retry finishes it.
   */
  @Override
  public void deleteAddress(Lease lease) {
    Optional<String> answer =
        delete(
            () -> deletes.address(lease.pod().namespace(), lease.name(), lease.objectUid()),
            "delete " + what(lease));
    endAttachment(lease, answer.flatMap(KubernetesStore::addressIn).orElse(null));
  }

  @Override
  public void endAttachment(Lease lease) {
    endAttachment(lease, null);
  }

  private void endAttachment(Lease lease, IPAddress deleted) {
    removeFinalizer(
        client
            .resources(IPAddress.class)
            .inNamespace(lease.pod().namespace())
            .withName(lease.name()),
        what(lease),
        lease.objectUid(),
        ApiConstants.FINALIZER_ATTACHMENT,
        deleted);
  }

  /**
   * Gives an IPAddress written before kipam.io/attachment existed what a new one has: the finalizer
   * and, for a static pod's address ({@code toNode}), its Node as holder in place of the mirror
   * Pod. A JSON patch that tests the object's UID and resourceVersion, so it changes only the
   * object as it was read; 404 and 409 (gone or changed meanwhile) are left to the next look.
   */
  public void adopt(IPAddress address, boolean toNode) {
    var meta = address.getMetadata();
    List<Map<String, Object>> ops = new ArrayList<>();
    ops.add(Map.of("op", "test", "path", "/metadata/uid", "value", meta.getUid()));
    ops.add(
        Map.of(
            "op", "test", "path", "/metadata/resourceVersion", "value", meta.getResourceVersion()));
    List<String> finalizers =
        new ArrayList<>(meta.getFinalizers() == null ? List.of() : meta.getFinalizers());
    if (!finalizers.contains(ApiConstants.FINALIZER_ATTACHMENT)) {
      finalizers.add(ApiConstants.FINALIZER_ATTACHMENT);
      ops.add(Map.of("op", "add", "path", "/metadata/finalizers", "value", finalizers));
    }
    if (toNode) {
      ops.add(
          Map.of(
              "op",
              "add",
              "path",
              "/metadata/ownerReferences",
              "value",
              List.of(
                  nodeHolder(
                      address.getSpec().getNode(),
                      meta.getNamespace() + "/" + address.getSpec().getPod().getName()))));
    }
    String what = "IPAddress " + meta.getNamespace() + "/" + meta.getName();
    try {
      limiter.acquire();
      client
          .resources(IPAddress.class)
          .inNamespace(meta.getNamespace())
          .withName(meta.getName())
          .patch(PatchContext.of(PatchType.JSON), Serialization.asJson(ops));
      log.info(
          "gave {} the finalizer {}{}",
          what,
          ApiConstants.FINALIZER_ATTACHMENT,
          toNode ? " and its Node as holder (a static pod's address)" : "");
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404 || e.getCode() == 409 || e.getCode() == 422) {
        return; // gone or changed since it was read (a failed test op is 422): looked at again
      }
      throw translate("add the finalizer to " + what, e, false);
    }
  }

  private static String what(Lease lease) {
    return "IPAddress " + lease.pod().namespace() + "/" + lease.name();
  }

  /**
   * The IPAddress a delete answered with (the object its finalizer keeps), if that is what it is.
   */
  private static Optional<IPAddress> addressIn(String answer) {
    try {
      Map<?, ?> object = Serialization.unmarshal(answer, Map.class);
      return IPAddress.KIND.equals(object.get("kind"))
          ? Optional.of(Serialization.unmarshal(answer, IPAddress.class))
          : Optional.empty();
    } catch (RuntimeException unreadable) {
      return Optional.empty(); // read afresh instead
    }
  }

  /**
   * A {@link PreconditionedDelete} paced by the node's write limiter. The UID is what tells "the
   * object this node created" from "an object of the same name made since", so 404 (gone already)
   * and 409 (the name is another object's now, not ours to delete) are success. Returns the API
   * server's answer to a delete it carried out.
   */
  private Optional<String> delete(Supplier<PreconditionedDelete.Answer> request, String what) {
    limiter.acquire();
    PreconditionedDelete.Answer answer;
    try {
      answer = request.get();
    } catch (KubernetesClientException e) {
      int code = e.getCode();
      if (e.getCause() instanceof InterruptedException) {
        throw new StoreUnavailableException("interrupted: cannot " + what, e);
      }
      if (code < 100) {
        throw new StoreUnavailableException("cannot reach the API server to " + what, e.getCause());
      }
      if (code == 429 || code >= 500) {
        throw new StoreUnavailableException(what + ": HTTP " + code, null);
      }
      throw new IllegalStateException(e.getMessage(), e);
    }
    return answer.outcome() == PreconditionedDelete.Outcome.DELETED
        ? Optional.ofNullable(answer.body())
        : Optional.empty();
  }

  /**
   * Sorts a failure by what it says about the request. For reads and deletes an unknown outcome is
   * simply "try again"; for creates it must be told apart.
   */
  static RuntimeException translate(String what, KubernetesClientException e, boolean create) {
    int code = e.getCode();
    if (code == 400 || code == 403 || code == 404 || code == 422) {
      String reason = e.getStatus() == null ? e.getMessage() : e.getStatus().getMessage();
      return new RequestRejectedException(
          code, "the API server refused to " + what + ": " + reason);
    }
    // No HTTP status at all (fabric8 reports 0 or -1): the transport failed, before or after the
    // request went out.
    boolean noAnswer = code < 100;
    if (code == 429 || (noAnswer && neverConnected(e))) {
      return new StoreUnavailableException(
          "cannot "
              + what
              + ": the API server is unreachable or overloaded ("
              + e.getMessage()
              + ")",
          e);
    }
    if (noAnswer || code >= 500) {
      String message =
          "cannot " + what + ": no answer from the API server (" + e.getMessage() + ")";
      return create
          ? new WriteOutcomeUnknownException(message, e)
          : new StoreUnavailableException(message, e);
    }
    return e;
  }

  private static boolean neverConnected(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }
}
