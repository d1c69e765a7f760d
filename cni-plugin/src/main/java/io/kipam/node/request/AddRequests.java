package io.kipam.node.request;

import io.kipam.api.net.IpAddress;
import io.kipam.api.net.IpFamily;
import io.kipam.cni.spec.Attachment;
import io.kipam.cni.spec.CniRequest;
import io.kipam.cni.spec.NetworkConfig;
import io.kipam.node.alloc.AddRequest;
import io.kipam.node.alloc.ClaimStore;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PoolDirectory;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Resolves a CNI ADD once into its {@link AddRequest} (design §5c): who asks (the pod bound to this
 * node, checked by {@link PodIdentity}), which network (the interface's configuration decides it,
 * never an annotation: {@link PoolChoice#network}), which pools in order per family (the
 * configuration's, or those an annotation chooses among the pools of that network the pod may use:
 * {@link PoolChoice}), and the intent of each family: {@code Claimed} when the attachment's address
 * belongs to an IPAMClaim ({@link ClaimChoice}), {@code Chosen} when the pod asks for an address by
 * name ({@link StaticRequest}), else {@code Dynamic}.
 */
public final class AddRequests {

  /** Who owns the address of a call: the Pod bound to this node (or its mirror Pod). */
  @FunctionalInterface
  public interface Owners {
    NodeWatch.Owner owner(String namespace, String name, Optional<String> runtimeUid)
        throws NodeWatch.PodNotOnNodeException;
  }

  private final PoolChoice choice;
  private final ClaimChoice claims;
  private final Owners owners;

  /**
   * @param pools the pools and namespaces as the node's watches show them
   * @param owners who owns an address: {@link NodeWatch#owner}
   * @param claims where IPAMClaims are read (and made, under the StatefulSet option)
   * @param node this node
   */
  public AddRequests(PoolDirectory pools, Owners owners, ClaimStore claims, String node) {
    this.choice = new PoolChoice(pools);
    this.claims = new ClaimChoice(claims, node);
    this.owners = owners;
  }

  /** The request of {@code request}, an ADD whose configuration and attachment are present. */
  public AddRequest resolve(CniRequest request)
      throws NodeWatch.PoolNotUsableException, NodeWatch.PodNotOnNodeException {
    NetworkConfig config = request.config().orElseThrow();
    Attachment attachment = request.attachment().orElseThrow();
    PodIdentity.validate(request.environment(), config);
    var args = request.environment().args();
    String namespace = args.podNamespace().orElseThrow();
    String network = choice.network(config.ipam().pools(), config.name());
    var configured = choice.configured(config.ipam().pools(), namespace);
    NodeWatch.Owner owner = owners.owner(namespace, args.podName().orElseThrow(), args.podUid());
    List<List<PoolView>> pools = choice.choose(configured, namespace, owner, network);
    Optional<ClaimStore.Claim> claim = claims.of(config, attachment, owner);
    List<IpAddress> statics =
        StaticRequest.of(config, request.environment(), attachment, owner, pools);
    List<AddRequest.Family> families = new ArrayList<>();
    for (List<PoolView> family : pools) {
      IpFamily ipFamily = family.get(0).layout().family();
      Optional<IpAddress> chosen =
          statics.stream().filter(ip -> ip.family() == ipFamily).findFirst();
      AddRequest.Intent intent =
          claim.isPresent()
              ? new AddRequest.Claimed(claim.get(), chosen)
              : chosen
                  .<AddRequest.Intent>map(AddRequest.Chosen::new)
                  .orElseGet(AddRequest.Dynamic::new);
      families.add(new AddRequest.Family(family, intent));
    }
    return new AddRequest(
        attachment, owner.ref(), config.name(), network, config.mac().orElse(null), families);
  }
}
