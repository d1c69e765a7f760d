package io.kipam.node.kube;

import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.AddressLifecycle;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.cni.spec.Attachment;
import io.kipam.node.alloc.AddressKey;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.ObjectRef;
import io.kipam.node.alloc.PodRef;
import java.util.Optional;

/** How an IPAddress object reads as a {@link Lease}, in one place for watches and fresh reads. */
final class Leases {

  private Leases() {}

  /** The lease an object records; throws when its content cannot be read. */
  static Lease from(IPAddress address) {
    var spec = address.getSpec();
    return new Lease(
        spec.getPool(),
        IpAddress.parse(spec.getIp()),
        ResourceNames.parseBlockName(spec.getBlock()).cidr(),
        spec.getNode(),
        spec.getNetwork(),
        new Attachment(spec.getContainerID(), spec.getInterfaceName()),
        new PodRef(
            address.getMetadata().getNamespace(),
            spec.getPod().getName(),
            spec.getPod().getUid(),
            AddressLifecycle.heldByNode(address)),
        spec.getMac(),
        address.getMetadata().getUid(),
        spec.getClaim());
  }

  /**
   * The address an object holds, from its spec or, when that cannot be read, from its name (which
   * encodes pool and address); empty when neither can.
   */
  static Optional<AddressKey> address(IPAddress address) {
    try {
      return Optional.of(
          new AddressKey(address.getSpec().getPool(), IpAddress.parse(address.getSpec().getIp())));
    } catch (RuntimeException unreadableSpec) {
      try {
        var name = ResourceNames.parseAddressName(address.getMetadata().getName());
        return Optional.of(new AddressKey(name.pool(), name.address()));
      } catch (RuntimeException unreadableName) {
        return Optional.empty();
      }
    }
  }

  static ObjectRef object(IPAddress address) {
    return new ObjectRef(address.getMetadata().getNamespace(), address.getMetadata().getUid());
  }
}
