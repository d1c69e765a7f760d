package io.kipam.node.alloc;

import io.kipam.api.net.IpAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;

/**
 * A slot of this node that kipam-operator asked to become Shared, and the addresses of it this node
 * holds or might hold (held, reserved, uncertain, unreadable, or resting after a release) that no
 * sub-claim covers yet. When {@code missing} is empty the slot may be written Shared.
 */
public record Conversion(BlockObject slot, List<IpAddress> missing) {

  /**
   * The conversion of each of {@code slots}: the addresses of {@code wanted} inside the slot (same
   * pool, within its CIDR) that are not {@code covered}, in address order.
   */
  static List<Conversion> plan(
      List<BlockObject> slots, Collection<AddressKey> wanted, Predicate<AddressKey> covered) {
    List<Conversion> conversions = new ArrayList<>();
    for (BlockObject slot : slots) {
      BlockRef ref = slot.ref();
      List<IpAddress> missing = new ArrayList<>();
      for (AddressKey address : wanted) {
        if (address.pool().equals(ref.pool())
            && ref.cidr().contains(address.ip())
            && !covered.test(address)) {
          missing.add(address.ip());
        }
      }
      missing.sort(null);
      conversions.add(new Conversion(slot, missing));
    }
    return conversions;
  }
}
