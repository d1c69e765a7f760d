package io.kipam.node.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.ClaimReference;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.node.alloc.ClaimException;
import io.kipam.node.alloc.ClaimStore;
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

  public KubernetesClaims(KubernetesClient client, KubernetesStore store) {
    this.client = client;
    this.store = store;
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
    if (claim == null) {
      return Optional.empty();
    }
    var spec = claim.getSpec();
    return Optional.of(
        new Claim(
            namespace,
            name,
            claim.getMetadata().getUid(),
            spec == null ? null : spec.getNetwork(),
            spec == null ? null : spec.getInterface(),
            claim.getMetadata().getDeletionTimestamp() != null));
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
            claim.uid()),
        "sub-claim for " + claim.what() + " ");
  }

  @Override
  public void releaseClaimed(String pool, IpAddress ip, String uid) {
    store.releaseBlock(pool, Cidr.of(ip, ip.family().bits()), uid);
  }

  @Override
  public void writeStatus(Claim claim, List<String> ips, String ownerPod) {
    Map<String, Object> patch =
        Map.of(
            "metadata",
            Map.of("uid", claim.uid()),
            "status",
            Map.of("ips", ips, "ownerPod", Map.of("name", ownerPod)));
    try {
      store.limiter.acquire();
      client
          .resources(IPAMClaim.class)
          .inNamespace(claim.namespace())
          .withName(claim.name())
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
  }
}
