package io.kipam.node.request;

import io.kipam.cni.spec.Attachment;
import io.kipam.cni.spec.IpamConfig;
import io.kipam.cni.spec.NetworkConfig;
import io.kipam.node.alloc.ClaimStore;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.Refusal;
import io.kipam.node.kube.NodeWatch;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The IPAMClaim an attachment's address belongs to (design §5b), if any: {@code
 * ipam-claim-reference} of the pod's network-selection element whose interface is the call's, or,
 * under the network's StatefulSet option, the claim {@code <pod>.<network>} kipam-node makes for a
 * StatefulSet's pod. Checked against the network configuration and the call: the network must allow
 * persistent addresses, the claim must be in the pod's namespace, not being deleted, and for this
 * network and interface.
 */
final class ClaimChoice {

  /** What a claim's name may be: a DNS subdomain. */
  private static final Pattern CLAIM_NAME =
      Pattern.compile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");

  private final ClaimStore claims;
  private final String node;

  ClaimChoice(ClaimStore claims, String node) {
    this.claims = claims;
    this.node = node;
  }

  Optional<ClaimStore.Claim> of(
      NetworkConfig config, Attachment attachment, NodeWatch.Owner owner) {
    PodRef pod = owner.ref();
    String selection = owner.annotation(NetworkSelection.ANNOTATION).orElse(null);
    Optional<NetworkSelection.Element> element;
    try {
      element = NetworkSelection.forInterface(selection, attachment.ifName());
    } catch (NetworkSelection.MalformedException e) {
      throw new Refusal(
          Refusal.Kind.INVALID_CONFIG,
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
                    new Refusal(
                        Refusal.Kind.TRY_AGAIN,
                        forPod + ", which does not exist; nothing was allocated",
                        "create the IPAMClaim (KubeVirt's ipam-extensions makes one per virtual"
                            + " machine and network), then the runtime's retry attaches it"));
    return Optional.of(fitting(claim, config, attachment, forPod));
  }

  /** The claim, when it may serve this call: not being deleted, of its network and interface. */
  private static ClaimStore.Claim fitting(
      ClaimStore.Claim claim, NetworkConfig config, Attachment attachment, String forPod) {
    if (claim.deleting()) {
      throw new Refusal(
          Refusal.Kind.TRY_AGAIN,
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
    String forPod =
        "pod "
            + pod.namespace()
            + "/"
            + pod.name()
            + " of StatefulSet "
            + controller.get().getName()
            + " uses IPAMClaim "
            + pod.namespace()
            + "/"
            + name
            + " for interface "
            + attachment.ifName()
            + " of network "
            + config.name()
            + " (ipam."
            + IpamConfig.STATEFUL_SET_CLAIMS
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
            node);
    if (!controller.get().getUid().equals(claim.controllerUid())) {
      throw refused(
          forPod
              + ", but that claim exists and is not this StatefulSet's (its controller has UID "
              + claim.controllerUid()
              + ")");
    }
    return Optional.of(fitting(claim, config, attachment, forPod));
  }

  private static Refusal refused(String message) {
    return new Refusal(Refusal.Kind.INVALID_CONFIG, message + "; nothing was allocated", "");
  }
}
