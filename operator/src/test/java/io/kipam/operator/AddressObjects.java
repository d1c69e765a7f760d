package io.kipam.operator;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.cni.spec.Attachment;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.PodRef;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * IPAddress objects and kipam-node's {@link Lease}s of them, for {@link Kipam}: the lease
 * kipam-node would write, or release, an object as, and the object written by hand that kipam-node
 * never writes (no owner, or a block that is no IPBlock name of its pool).
 */
final class AddressObjects {

  /** The CNI network of the addresses the tests write. */
  static final String NETWORK = "kipam-test";

  private AddressObjects() {}

  /** The lease kipam-node writes for {@code pod}'s address {@code ip} in {@code block}. */
  static Lease lease(
      String namespace, String pool, Cidr block, String node, IpAddress ip, PodReference pod) {
    return new Lease(
        pool,
        ip,
        block,
        node,
        NETWORK,
        new Attachment("container-" + UUID.randomUUID(), "eth0"),
        new PodRef(namespace, pod.getName(), pod.getUid()),
        null,
        null);
  }

  /**
   * The lease kipam-node knows {@code address} as: the object (namespace, name, UID) is what its
   * release writes act on.
   */
  static Lease leaseOf(IPAddress address) {
    IPAddressSpec spec = address.getSpec();
    IpAddress ip = IpAddress.parse(spec.getIp());
    PodReference pod = spec.getPod();
    return new Lease(
        spec.getPool(),
        ip,
        blockOf(spec.getPool(), spec.getBlock()).orElse(Cidr.of(ip, ip.family().bits())),
        spec.getNode(),
        spec.getNetwork(),
        new Attachment(
            Objects.requireNonNullElse(spec.getContainerID(), ""),
            Objects.requireNonNullElse(spec.getInterfaceName(), "")),
        new PodRef(address.getMetadata().getNamespace(), pod.getName(), pod.getUid()),
        spec.getMac(),
        address.getMetadata().getUid(),
        spec.getClaim());
  }

  /** The CIDR {@code block} names in {@code pool}; empty for a name kipam does not give. */
  static Optional<Cidr> blockOf(String pool, String block) {
    try {
      ResourceNames.BlockName name = ResourceNames.parseBlockName(block);
      return name.pool().equals(pool) ? Optional.of(name.cidr()) : Optional.empty();
    } catch (IllegalArgumentException notABlockName) {
      return Optional.empty();
    }
  }

  /**
   * An IPAddress kipam-node would not write: its name, labels, finalizer and spec as kipam-node
   * gives them, its holder (a Pod owner, or none) and its block as the test says.
   */
  static IPAddress byHand(
      String namespace,
      String pool,
      String block,
      String node,
      IpAddress ip,
      PodReference pod,
      boolean owned) {
    Map<String, String> labels = new HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, pool);
    labels.put(ApiConstants.LABEL_NODE, node);
    labels.put(ApiConstants.LABEL_NETWORK, NETWORK);
    blockOf(pool, block)
        .ifPresent(cidr -> labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(cidr)));
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, ip))
            .withNamespace(namespace)
            .withFinalizers(ApiConstants.FINALIZER_ATTACHMENT)
            .withLabels(labels);
    if (owned) {
      meta.withOwnerReferences(
          new OwnerReferenceBuilder()
              .withApiVersion("v1")
              .withKind("Pod")
              .withName(pod.getName())
              .withUid(pod.getUid())
              .withController(true)
              .withBlockOwnerDeletion(false)
              .build());
    }
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip.toString());
    spec.setPool(pool);
    spec.setBlock(block);
    spec.setNode(node);
    spec.setNetwork(NETWORK);
    spec.setPod(pod);
    spec.setContainerID("container-" + UUID.randomUUID());
    spec.setInterfaceName("eth0");
    IPAddress object = new IPAddress();
    object.setMetadata(meta.build());
    object.setSpec(spec);
    return object;
  }
}
