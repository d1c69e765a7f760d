package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.ipamclaims.IPAMClaimSpec;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.ClaimReference;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.node.alloc.ClaimException;
import io.kipam.node.alloc.ClaimStore;
import io.kipam.runtime.client.Named;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ClaimStore} on the Kubernetes API. A claim's sub-claim is an IPBlock like every sub-claim
 * (named from pool and address, so a second claim of the address collides, owned by its pool, born
 * with {@code kipam.io/block-protection}) but with {@code spec.claim} in place of {@code spec.node}
 * and the label {@code kipam.io/claim} (the claim's UID) in place of {@code kipam.io/node}: no
 * node's block watch sees it, and no node gives it back when its pod goes.
 */
public final class KubernetesClaims implements ClaimStore {

  private static final Logger log = LoggerFactory.getLogger(KubernetesClaims.class);

  private final KubernetesClient client;
  private final KubernetesStore store;
  private final AddressEvents events;

  /**
   * @param events where the Event on a claim whose address was attached is written
   */
  public KubernetesClaims(KubernetesClient client, KubernetesStore store, AddressEvents events) {
    this.client = client;
    this.store = store;
    this.events = events;
  }

  @Override
  public Optional<Claim> readClaim(String namespace, String name) {
    IPAMClaim claim;
    try {
      store.limiter.acquire();
      claim = client.resources(IPAMClaim.class).inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      throw KubernetesStore.translate("read IPAMClaim " + namespace + "/" + name, e, false);
    }
    return Optional.ofNullable(claim).map(KubernetesClaims::claim);
  }

  private static Claim claim(IPAMClaim claim) {
    var spec = claim.getSpec();
    var meta = claim.getMetadata();
    String controller =
        meta.getOwnerReferences() == null
            ? null
            : meta.getOwnerReferences().stream()
                .filter(o -> Boolean.TRUE.equals(o.getController()))
                .map(OwnerReference::getUid)
                .findFirst()
                .orElse(null);
    return new Claim(
        meta.getNamespace(),
        meta.getName(),
        meta.getUid(),
        spec == null ? null : spec.getNetwork(),
        spec == null ? null : spec.getInterface(),
        controller,
        meta.getDeletionTimestamp() != null,
        meta.getResourceVersion(),
        claim.getStatus() == null ? List.of() : claim.getStatus().getIps());
  }

  @Override
  public Claim ensureClaim(
      String namespace,
      String name,
      String network,
      String ifName,
      Controller controller,
      String node) {
    IPAMClaim claim = new IPAMClaim();
    claim.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_NODE,
                    node,
                    ApiConstants.LABEL_STATEFUL_SET,
                    controller.name()))
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion(controller.apiVersion())
                    .withKind(controller.kind())
                    .withName(controller.name())
                    .withUid(controller.uid())
                    .withController(true)
                    .withBlockOwnerDeletion(false)
                    .build())
            .build());
    claim.setSpec(new IPAMClaimSpec(network, ifName));
    String what = "IPAMClaim " + namespace + "/" + name;
    try {
      store.limiter.acquire();
      IPAMClaim created = client.resource(claim).create();
      log.info("made {} for the pod of StatefulSet {}", what, controller.name());
      return claim(created);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw KubernetesStore.translate("create " + what, e, true);
      }
    }
    return readClaim(namespace, name)
        .orElseThrow(
            () ->
                new ClaimException(
                    ClaimException.Kind.TRY_AGAIN,
                    what + " was deleted as it was made; try again"));
  }

  @Override
  public List<Claimed> claimedIn(String pool, String claimUid) {
    List<Claimed> held = new ArrayList<>();
    try {
      store.limiter.acquire();
      for (IPBlock block :
          client
              .resources(IPBlock.class)
              .withLabel(ApiConstants.LABEL_POOL, pool)
              .withLabel(ApiConstants.LABEL_CLAIM, claimUid)
              .list()
              .getItems()) {
        claimed(block).ifPresent(held::add);
      }
    } catch (KubernetesClientException e) {
      throw KubernetesStore.translate("list the sub-claims of IPAMClaim " + claimUid, e, false);
    }
    return held;
  }

  @Override
  public Optional<Claimed> readClaimed(String pool, IpAddress ip) {
    String name = ResourceNames.blockName(pool, Cidr.of(ip, ip.family().bits()));
    try {
      store.limiter.acquire();
      return Optional.ofNullable(client.resources(IPBlock.class).withName(name).get())
          .flatMap(KubernetesClaims::claimed);
    } catch (KubernetesClientException e) {
      throw KubernetesStore.translate("read IPBlock " + name, e, false);
    }
  }

  /** A sub-claim as {@link Claimed}; a block that is no sub-claim has no claim UID. */
  private static Optional<Claimed> claimed(IPBlock block) {
    try {
      var spec = block.getSpec();
      Cidr host = Cidr.parse(spec.getCidr());
      Cidr slot =
          spec.getParent() == null ? null : ResourceNames.parseBlockName(spec.getParent()).cidr();
      return Optional.of(
          new Claimed(
              host.network(),
              block.getMetadata().getUid(),
              slot,
              spec.getClaim() == null ? null : spec.getClaim().getUid(),
              block.getMetadata().getDeletionTimestamp() != null));
    } catch (RuntimeException unreadable) {
      log.warn(
          "IPBlock {} cannot be read ({}); left out",
          block.getMetadata().getName(),
          unreadable.toString());
      return Optional.empty();
    }
  }

  @Override
  public String createClaimed(String pool, IpAddress ip, Cidr slot, Claim claim) {
    Cidr host = Cidr.of(ip, ip.family().bits());
    return store.createBlock(
        IPBlockSpec.claimed(
            pool,
            host.toString(),
            ResourceNames.blockName(pool, slot),
            new ClaimReference(claim.namespace(), claim.name(), claim.uid())),
        Map.of(
            ApiConstants.LABEL_POOL,
            pool,
            ApiConstants.LABEL_BLOCK,
            ResourceNames.blockLabel(host),
            ApiConstants.LABEL_PARENT,
            ResourceNames.blockLabel(slot),
            ApiConstants.LABEL_CLAIM,
            claim.uid(),
            ApiConstants.LABEL_CREATED_BY,
            store.node()),
        "sub-claim for " + claim.what() + " ");
  }

  @Override
  public void releaseClaimed(String pool, IpAddress ip, String uid) {
    store.releaseBlock(pool, Cidr.of(ip, ip.family().bits()), uid);
  }

  @Override
  public Optional<Claim> bindAddresses(Claim claim, List<String> ips) {
    // The resourceVersion in a patch is a precondition: of two binds from one read, one wins.
    Map<String, Object> patch =
        Map.of(
            "metadata",
            Map.of("uid", claim.uid(), "resourceVersion", claim.resourceVersion()),
            "status",
            Map.of("ips", ips));
    IPAMClaim written;
    try {
      store.limiter.acquire();
      written =
          Named.object(client, IPAMClaim.class, claim.namespace(), claim.name())
              .subresource("status")
              .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return Optional.empty();
      }
      if (e.getCode() == 404) {
        throw new ClaimException(
            ClaimException.Kind.TRY_AGAIN,
            claim.what() + " was deleted while an address was bound to it; try again");
      }
      throw KubernetesStore.translate("bind addresses to " + claim.what(), e, true);
    }
    log.info("bound {} to {}", String.join(", ", ips), claim.what());
    return Optional.of(claim(written));
  }

  @Override
  public void writeStatus(Claim claim, List<String> ips, String ownerPod, String node) {
    Map<String, Object> patch =
        Map.of(
            "metadata",
            Map.of("uid", claim.uid()),
            "status",
            Map.of("ips", ips, "ownerPod", Map.of("name", ownerPod)));
    IPAMClaim written;
    try {
      store.limiter.acquire();
      written =
          Named.object(client, IPAMClaim.class, claim.namespace(), claim.name())
              .subresource("status")
              .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        throw new ClaimException(
            ClaimException.Kind.TRY_AGAIN,
            claim.what() + " was deleted or made again while its address was attached; try again");
      }
      throw KubernetesStore.translate("write the status of " + claim.what(), e, false);
    }
    events.record(
        IPAMClaim.API_VERSION,
        IPAMClaim.KIND,
        written.getMetadata(),
        "AddressAttached",
        String.join(", ", ips) + " attached to pod " + ownerPod + " on node " + node);
  }
}
