package io.kipam.api.ipamclaims;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * The multi-network standard's persistent address claim ({@code k8s.cni.cncf.io/v1alpha1
 * IPAMClaim}, from k8snetworkplumbingwg/ipamclaims v0.5): an address that outlives the pods that
 * use it. KubeVirt's ipam-extensions creates one per virtual machine and network ({@code
 * <vm>.<network>}); kipam-node creates one per StatefulSet pod and network when the network asks it
 * to. A pod names its claim in its network-selection element ({@code ipam-claim-reference}).
 *
 * <p>kipam does not own this API: its CRD ({@code config/ipamclaims}) is the upstream schema, field
 * for field, and is optional; kipam only reads {@code spec} and writes {@code status}.
 */
@Group(IPAMClaim.GROUP)
@Version(IPAMClaim.VERSION)
@Kind("IPAMClaim")
@Plural("ipamclaims")
@Singular("ipamclaim")
public class IPAMClaim extends CustomResource<IPAMClaimSpec, IPAMClaimStatus>
    implements Namespaced {

  public static final String GROUP = "k8s.cni.cncf.io";
  public static final String VERSION = "v1alpha1";
  public static final String KIND = "IPAMClaim";
  public static final String API_VERSION = GROUP + "/" + VERSION;
}
