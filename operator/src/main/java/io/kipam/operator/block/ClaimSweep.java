package io.kipam.operator.block;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
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
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back the addresses of deleted IPAMClaims (design §5b): a sub-claim whose {@code spec.claim}
 * names a claim that no longer exists (or exists under another UID: made again under the same name)
 * is deleted. Its finalizer then keeps it while an IPAddress of the address exists (a pod still
 * attached: the address is free only when the claim is gone and the attachment is over), and the
 * block controller lets it go once a fresh read finds none.
 *
 * <p>One LIST of IPAMClaims per namespace that holds such sub-claims, each {@link #INTERVAL}: the
 * cost follows the namespaces with persistent addresses, not the claims. Without the IPAMClaim CRD
 * no claim exists, and every such sub-claim goes.
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
    for (var entry : byNamespace.entrySet()) {
      Set<String> live = claimUids(entry.getKey());
      for (IPBlock block : entry.getValue()) {
        ClaimReference claim = block.getSpec().getClaim();
        if (!live.contains(claim.getUid())) {
          giveBack(block, claim);
        }
      }
    }
  }

  /** The UIDs of the IPAMClaims of {@code namespace}; none when the CRD is not served. */
  private Set<String> claimUids(String namespace) {
    Set<String> uids = new HashSet<>();
    try {
      for (IPAMClaim claim :
          client.resources(IPAMClaim.class).inNamespace(namespace).list().getItems()) {
        uids.add(claim.getMetadata().getUid());
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
    return uids;
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
            + " goes back once no pod is attached to it";
    log.info("IPBlock {}: {}", name, why);
    events.record(block, EventRecorder.Type.Normal, "ClaimGone", why);
  }
}
