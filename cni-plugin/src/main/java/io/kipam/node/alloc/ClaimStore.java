package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Optional;

/**
 * The API calls of persistent addresses (design §5b): reading IPAMClaims, the sub-claims that hold
 * their addresses (host-prefix IPBlocks without a node, with {@code spec.claim}), and writing a
 * claim's status. Reads are fresh (never a cache). Failures are sorted as in {@link
 * AllocationStore}.
 */
public interface ClaimStore {

  /**
   * An IPAMClaim as read: identity, what it is for, the UID of its controller (the owner reference
   * marked controller; null without one), whether it is being deleted, its resourceVersion (null
   * when not read from the API) and its {@code status.ips} (CIDR notation: the addresses bound to
   * it, see {@link #bindAddresses}).
   */
  record Claim(
      String namespace,
      String name,
      String uid,
      String network,
      String ifName,
      String controllerUid,
      boolean deleting,
      String resourceVersion,
      List<String> ips) {

    public Claim {
      ips = ips == null ? List.of() : List.copyOf(ips);
    }

    /** A claim as a request names it, without resourceVersion and status. */
    public Claim(
        String namespace,
        String name,
        String uid,
        String network,
        String ifName,
        String controllerUid,
        boolean deleting) {
      this(namespace, name, uid, network, ifName, controllerUid, deleting, null, List.of());
    }

    public String what() {
      return "IPAMClaim " + namespace + "/" + name;
    }
  }

  /**
   * The sub-claim of a persistent address: its address, object UID, parent slot's CIDR, the UID of
   * the claim holding it, and whether it is being deleted.
   */
  record Claimed(IpAddress ip, String uid, Cidr slot, String claimUid, boolean deleting) {}

  /** The controller of a claim kipam-node makes: a StatefulSet, by name and UID. */
  record Controller(String apiVersion, String kind, String name, String uid) {}

  /**
   * The claim {@code namespace/name}, made for {@code network} and {@code ifName}, owned by {@code
   * controller} and labelled with {@code node} (the node that made it) when it does not exist yet;
   * the existing one otherwise.
   */
  Claim ensureClaim(
      String namespace,
      String name,
      String network,
      String ifName,
      Controller controller,
      String node);

  /** The claim {@code namespace/name}; empty when it does not exist (or its CRD is not served). */
  Optional<Claim> readClaim(String namespace, String name);

  /** The sub-claims of pool {@code pool} held by the claim with UID {@code claimUid}. */
  List<Claimed> claimedIn(String pool, String claimUid);

  /** The sub-claim of {@code ip} in {@code pool}, whoever's; empty when there is none. */
  Optional<Claimed> readClaimed(String pool, IpAddress ip);

  /**
   * Creates the sub-claim of {@code ip} in the Shared slot {@code slot}, held by {@code claim};
   * returns its UID, or null when someone holds the address already (409).
   */
  String createClaimed(String pool, IpAddress ip, Cidr slot, Claim claim);

  /**
   * Deletes the sub-claim object {@code uid} of {@code ip} and lets it go (its finalizer): only for
   * a sub-claim this call's ADD made and could not use.
   */
  void releaseClaimed(String pool, IpAddress ip, String uid);

  /**
   * Binds addresses to the claim: writes its {@code status.ips} (CIDR notation) if the claim is
   * still the object {@code claim.uid()} at {@code claim.resourceVersion()}. Returns the claim as
   * written, or empty when it changed since it was read (409: another node may have bound an
   * address first; read it again). Only one of two binds from one read can win.
   */
  Optional<Claim> bindAddresses(Claim claim, List<String> ips);

  /**
   * Writes the claim's {@code status.ips} (CIDR notation) and {@code status.ownerPod}, if it is
   * still the object {@code claim.uid()}, and an Event on it naming the pod and {@code node}.
   */
  void writeStatus(Claim claim, List<String> ips, String ownerPod, String node);
}
