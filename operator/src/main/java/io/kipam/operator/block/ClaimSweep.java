package io.kipam.operator.block;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.v1alpha1.ClaimReference;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.operator.kube.ControllerCaches;
import io.kipam.operator.kube.EventRecorder;
import io.kipam.runtime.client.PreconditionedDelete;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back the addresses of deleted IPAMClaims (design §5b): a sub-claim whose {@code spec.claim}
 * names a claim that no longer exists (or exists under another UID: made again under the same name)
 * is deleted. Its finalizer then keeps it for the pool's reuse delay from its deletion ({@link
 * ClaimAddressRest}: the claim was the address's holder) and while an IPAddress of the address
 * exists (a pod still attached: the address is free only when the claim is gone and the attachment
 * is over), and the block controller lets it go once both are over and a fresh read finds none.
 *
 * <p>One LIST of IPAMClaims per namespace that holds such sub-claims, each {@link #INTERVAL}: the
 * cost follows the namespaces with persistent addresses, not the claims. Without the IPAMClaim CRD
 * no claim exists, and every such sub-claim goes. The claims kipam-node made for StatefulSet pods
 * of ordinals the StatefulSet no longer has are deleted here too, when its {@code whenScaled}
 * retention policy is {@code Delete}.
 */
public final class ClaimSweep implements Runnable {

  private static final Logger log = LoggerFactory.getLogger(ClaimSweep.class);

  /** How often the sub-claims of persistent addresses are checked against their claims. */
  public static final Duration INTERVAL = Duration.ofSeconds(5);

  private final KubernetesClient client;
  private final ControllerCaches caches;
  private final PreconditionedDelete delete;
  private final EventRecorder events;

  public ClaimSweep(
      KubernetesClient client,
      ControllerCaches caches,
      PreconditionedDelete delete,
      EventRecorder events) {
    this.client = client;
    this.caches = caches;
    this.delete = delete;
    this.events = events;
  }

  @Override
  public void run() {
    if (!caches.synced()) {
      return;
    }
    Map<String, List<IPBlock>> byNamespace = new HashMap<>();
    for (IPBlock block : caches.blocks()) {
      ClaimReference claim = block.getSpec() == null ? null : block.getSpec().getClaim();
      if (claim != null && block.getMetadata().getDeletionTimestamp() == null) {
        byNamespace
            .computeIfAbsent(claim.getNamespace(), n -> new java.util.ArrayList<>())
            .add(block);
      }
    }
    Map<String, Optional<StatefulSet>> statefulSets = new HashMap<>();
    for (var entry : byNamespace.entrySet()) {
      List<IPAMClaim> claims = claims(entry.getKey());
      Set<String> live = new HashSet<>();
      for (IPAMClaim claim : claims) {
        if (!scaledAway(claim, statefulSets)) {
          live.add(claim.getMetadata().getUid());
        }
      }
      for (IPBlock block : entry.getValue()) {
        ClaimReference claim = block.getSpec().getClaim();
        if (!live.contains(claim.getUid())) {
          giveBack(block, claim);
        }
      }
    }
  }

  /** The IPAMClaims of {@code namespace}; none when the CRD is not served. */
  private List<IPAMClaim> claims(String namespace) {
    try {
      return client.resources(IPAMClaim.class).inNamespace(namespace).list().getItems();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      return List.of();
    }
  }

  /**
   * Whether {@code claim} is one kipam-node made for a StatefulSet's pod whose ordinal the
   * StatefulSet no longer has, with {@code persistentVolumeClaimRetentionPolicy.whenScaled:
   * Delete}: then it is deleted (its address goes back once no pod uses it). With {@code Retain}
   * (the default) it stays until the StatefulSet is deleted, and the garbage collector takes it.
   */
  private boolean scaledAway(IPAMClaim claim, Map<String, Optional<StatefulSet>> statefulSets) {
    var meta = claim.getMetadata();
    String owner =
        meta.getLabels() == null ? null : meta.getLabels().get(ApiConstants.LABEL_STATEFUL_SET);
    if (owner == null || meta.getDeletionTimestamp() != null) {
      return false;
    }
    Optional<StatefulSet> set =
        statefulSets.computeIfAbsent(
            meta.getNamespace() + "/" + owner,
            k ->
                Optional.ofNullable(
                    client
                        .apps()
                        .statefulSets()
                        .inNamespace(meta.getNamespace())
                        .withName(owner)
                        .get()));
    if (set.isEmpty() || !ownedBy(claim, set.get())) {
      return false;
    }
    var spec = set.get().getSpec();
    var policy = spec.getPersistentVolumeClaimRetentionPolicy();
    if (policy == null || !"Delete".equals(policy.getWhenScaled())) {
      return false;
    }
    OptionalInt ordinal = ordinal(meta.getName(), owner);
    if (ordinal.isEmpty()) {
      return false;
    }
    int start =
        spec.getOrdinals() == null || spec.getOrdinals().getStart() == null
            ? 0
            : spec.getOrdinals().getStart();
    int replicas = spec.getReplicas() == null ? 1 : spec.getReplicas();
    if (ordinal.getAsInt() >= start && ordinal.getAsInt() < start + replicas) {
      return false;
    }
    try {
      client
          .resources(IPAMClaim.class)
          .inNamespace(meta.getNamespace())
          .withName(meta.getName())
          .lockResourceVersion(meta.getResourceVersion())
          .delete();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 && e.getCode() != 409) {
        throw e;
      }
      return false;
    }
    String why =
        "StatefulSet "
            + owner
            + " has "
            + replicas
            + " replicas from ordinal "
            + start
            + " and whenScaled: Delete: the claim of ordinal "
            + ordinal.getAsInt()
            + " goes, and its addresses once no pod uses them";
    log.info("IPAMClaim {}/{}: {}", meta.getNamespace(), meta.getName(), why);
    events.record(claim, EventRecorder.Type.Normal, "ScaledDown", why);
    return true;
  }

  private static boolean ownedBy(IPAMClaim claim, StatefulSet set) {
    return claim.getMetadata().getOwnerReferences() != null
        && claim.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> set.getMetadata().getUid().equals(o.getUid()));
  }

  /** The ordinal of claim {@code <set>-<ordinal>.<network>}; empty for another name. */
  static OptionalInt ordinal(String claim, String set) {
    if (!claim.startsWith(set + "-")) {
      return OptionalInt.empty();
    }
    String rest = claim.substring(set.length() + 1);
    int dot = rest.indexOf('.');
    String digits = dot < 0 ? rest : rest.substring(0, dot);
    if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit)) {
      return OptionalInt.empty();
    }
    return OptionalInt.of(Integer.parseInt(digits));
  }

  private void giveBack(IPBlock block, ClaimReference claim) {
    String name = block.getMetadata().getName();
    var outcome = delete.block(name, block.getMetadata().getUid(), null).outcome();
    if (outcome != PreconditionedDelete.Outcome.DELETED) {
      return;
    }
    String why =
        "IPAMClaim "
            + claim.getNamespace()
            + "/"
            + claim.getName()
            + " (UID "
            + claim.getUid()
            + ") is gone: its address "
            + block.getSpec().getCidr()
            + " goes back once it has rested for the pool's reuse delay and no pod is attached"
            + " to it";
    log.info("IPBlock {}: {}", name, why);
    events.record(block, EventRecorder.Type.Normal, "ClaimGone", why);
  }
}
