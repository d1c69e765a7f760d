package io.kipam.api.v1alpha1;

import io.kipam.api.ApiConstants;
import java.util.List;

/**
 * What an IPAddress's metadata says about who holds it and whether its attachment is over (design
 * §5b), read the same way by kipam-node and kipam-operator. Pure.
 */
public final class AddressLifecycle {

  private AddressLifecycle() {}

  /**
   * Whether the address is held by its Node (an owner reference of kind Node), as a static pod's
   * is, rather than by its Pod: a mirror Pod is created again with a new UID whenever someone
   * deletes it while the static pod lives on.
   */
  public static boolean heldByNode(IPAddress address) {
    var owners = address.getMetadata().getOwnerReferences();
    return owners != null
        && owners.stream()
            .anyMatch(o -> "Node".equals(o.getKind()) && "v1".equals(o.getApiVersion()));
  }

  /** Whether the address carries {@code kipam.io/attachment}: its attachment is not over yet. */
  public static boolean attached(IPAddress address) {
    List<String> finalizers = address.getMetadata().getFinalizers();
    return finalizers != null && finalizers.contains(ApiConstants.FINALIZER_ATTACHMENT);
  }

  /** Whether someone has deleted the address (it waits for its finalizers). */
  public static boolean deleting(IPAddress address) {
    String since = address.getMetadata().getDeletionTimestamp();
    return since != null && !since.isEmpty();
  }
}
