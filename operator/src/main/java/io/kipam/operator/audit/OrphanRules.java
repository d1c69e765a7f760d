package io.kipam.operator.audit;

import static io.kipam.api.v1alpha1.AddressLifecycle.attached;
import static io.kipam.api.v1alpha1.AddressLifecycle.deleting;
import static io.kipam.api.v1alpha1.AddressLifecycle.heldByNode;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.PodReference;
import java.util.List;
import java.util.Optional;

/**
 * Decides whether an IPAddress is an orphan, from what the cluster says about the objects it names,
 * and what removing one takes. Pure: the caller looks the objects up (and says whose Pods it looks
 * up at all: {@link Facts#checksPodsOn}). The Pod is checked first, then the block, then the Node,
 * so an address missing several is reported for the first.
 *
 * <p>A Terminating IPAddress (deleted, held by the finalizer {@code kipam.io/attachment} until its
 * attachment is over) is its node daemon's to finish while its Node exists: it is no orphan then,
 * whatever else is missing. Only when its Node is gone, so that no daemon can end the attachment,
 * is it an orphan (reason {@code node}).
 */
public final class OrphanRules {

  /** What the cluster holds of the objects one IPAddress names. */
  public interface Facts {
    /**
     * The UID of the Pod {@code namespace/name} of an address that Node {@code node} wrote, if one
     * exists. A Pod never moves to another Node, so for a Node that is gone this may be answered
     * from the Pods bound to it, one list per Node rather than a read per address.
     */
    Optional<String> podUid(String node, String namespace, String name);

    /** Whether the IPBlock {@code name} exists (being deleted counts: it still waits for us). */
    boolean blockExists(String name);

    boolean nodeExists(String name);

    /**
     * Whether the Pods of addresses on Node {@code node} are looked up. The periodic audit does so
     * only where no daemon can: for a Node that is gone (design §6; a node's daemon audits its own
     * addresses against its pod watch); {@code kipam-operator check} everywhere.
     */
    default boolean checksPodsOn(String node) {
      return true;
    }
  }

  /** An orphan: why, and a sentence naming the missing object. */
  public record Verdict(OrphanReason reason, String detail) {}

  /**
   * What removing an orphan takes: a delete, unless it is being deleted already; and the removal of
   * {@code kipam.io/attachment}, only when its Node is gone, whatever the verdict names first (on a
   * live Node the daemon removes it once the attachment is over; a Node that vanished took its
   * daemon with it, and usually its Pods, which makes its addresses orphans of their Pod).
   */
  public record Removal(boolean delete, boolean endAttachment) {

    public static Removal of(IPAddress address, Facts facts) {
      String node = address.getSpec().getNode();
      boolean nodeGone = node != null && !facts.nodeExists(node);
      return new Removal(!deleting(address), nodeGone && attached(address));
    }
  }

  private OrphanRules() {}

  /**
   * The Pod the address belongs to: its ownerReference of kind Pod, else {@code spec.pod} (an
   * address written without an owner still names its pod).
   */
  public static PodReference podOf(IPAddress address) {
    List<OwnerReference> owners = address.getMetadata().getOwnerReferences();
    if (owners != null) {
      for (OwnerReference owner : owners) {
        if ("Pod".equals(owner.getKind()) && "v1".equals(owner.getApiVersion())) {
          return new PodReference(owner.getName(), owner.getUid());
        }
      }
    }
    return address.getSpec().getPod();
  }

  /**
   * The Node whose daemon finishes {@code address}: present when it is Terminating and its Node
   * exists.
   */
  public static Optional<String> keptBy(IPAddress address, Facts facts) {
    String node = address.getSpec().getNode();
    if (!deleting(address) || node == null || !facts.nodeExists(node)) {
      return Optional.empty();
    }
    return Optional.of(node);
  }

  /** Why {@code address} is an orphan, or empty when everything it names exists. */
  public static Optional<Verdict> classify(IPAddress address, Facts facts) {
    if (deleting(address)) {
      return nodeGone(address, facts);
    }
    if (facts.checksPodsOn(address.getSpec().getNode()) && podGone(address, facts)) {
      PodReference pod = podOf(address);
      return verdict(
          OrphanReason.POD,
          address.getMetadata().getNamespace() + "/" + pod.getName(),
          pod.getUid());
    }
    String block = address.getSpec().getBlock();
    if (block != null && !facts.blockExists(block)) {
      return verdict(OrphanReason.BLOCK, block);
    }
    return nodeGone(address, facts);
  }

  /**
   * Whether the Pod {@code address} names (name and UID) does not exist: false for an address that
   * names none (a static pod's, held by its Node, or one without a name or UID).
   */
  public static boolean podGone(IPAddress address, Facts facts) {
    PodReference pod = heldByNode(address) ? null : podOf(address);
    if (pod == null || pod.getName() == null || pod.getUid() == null) {
      return false;
    }
    Optional<String> uid =
        facts.podUid(
            address.getSpec().getNode(), address.getMetadata().getNamespace(), pod.getName());
    return uid.isEmpty() || !uid.get().equals(pod.getUid());
  }

  private static Optional<Verdict> nodeGone(IPAddress address, Facts facts) {
    String node = address.getSpec().getNode();
    if (node != null && !facts.nodeExists(node)) {
      return verdict(OrphanReason.NODE, node);
    }
    return Optional.empty();
  }

  private static Optional<Verdict> verdict(OrphanReason reason, Object... names) {
    return Optional.of(new Verdict(reason, reason.describe(names)));
  }
}
