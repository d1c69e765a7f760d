package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.cni.spec.Attachment;

/**
 * An address held by one attachment, as this node knows it: the content of one IPAddress object.
 * {@code network} is the CNI network (the configuration's {@code name}) the attachment belongs to.
 * {@code objectUid} is the IPAddress object's own UID (null until the API server assigned it): with
 * the pod's namespace it identifies the object, and it is the precondition of its deletion, so a
 * DEL never removes an object created again under the same name. {@code claim} names the IPAMClaim
 * (in the pod's namespace) that holds a persistent address; null for an address the pod holds.
 */
public record Lease(
    String pool,
    IpAddress ip,
    Cidr block,
    String node,
    String network,
    Attachment attachment,
    PodRef pod,
    String mac,
    String objectUid,
    String claim) {

  /** A lease of an address its pod holds (no IPAMClaim). */
  public Lease(
      String pool,
      IpAddress ip,
      Cidr block,
      String node,
      String network,
      Attachment attachment,
      PodRef pod,
      String mac,
      String objectUid) {
    this(pool, ip, block, node, network, attachment, pod, mac, objectUid, null);
  }

  /** The IPAddress object's name: derived from pool and address, so a second claim collides. */
  public String name() {
    return ResourceNames.addressName(pool, ip);
  }

  public String blockName() {
    return ResourceNames.blockName(pool, block);
  }

  public AddressKey address() {
    return new AddressKey(pool, ip);
  }

  /** The object this lease was read from or written as; only for leases with an object UID. */
  public ObjectRef object() {
    return new ObjectRef(pod.namespace(), objectUid);
  }

  /** Whether this is the write of {@code attachment} for the pod with {@code podUid}. */
  public boolean writtenFor(Attachment attachment, String podUid) {
    return this.attachment.equals(attachment) && pod.uid().equals(podUid);
  }

  public Lease withObjectUid(String uid) {
    return new Lease(pool, ip, block, node, network, attachment, pod, mac, uid, claim);
  }
}
