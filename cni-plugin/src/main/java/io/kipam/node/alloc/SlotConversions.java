package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Which of this node's slots are to be converted to Shared now, and what each still has to
 * sub-claim; and how a sub-claim a conversion made is recorded. It holds no state: the {@link
 * Ledger} calls it under its monitor with its blocks, the sub-claims it knows and the addresses it
 * holds or might hold.
 */
final class SlotConversions {

  private SlotConversions() {}

  /**
   * The conversions to carry out now: this node's slots whose {@code status.share} the block watch
   * has shown and whose {@code status.mode} is not Shared yet, each with the addresses of {@code
   * inUse} or {@code resting} inside it that no sub-claim {@link #covered covers}. Such a slot is
   * closed since the request was seen, so {@code missing} can only shrink. The address sets are
   * only asked for when some slot is converting.
   */
  static List<Conversion> pending(
      NodeBlocks blocks, Supplier<Set<AddressKey>> inUse, Supplier<Set<AddressKey>> resting) {
    List<NodeBlocks.Own> converting = blocks.converting();
    if (converting.isEmpty()) {
      return List.of();
    }
    Set<AddressKey> wanted = inUse.get();
    wanted.addAll(resting.get());
    List<BlockObject> slots = new ArrayList<>();
    converting.forEach(slot -> slots.add(slot.object));
    return Conversion.plan(slots, wanted, address -> covered(blocks, address));
  }

  /**
   * Whether a sub-claim of this node's (not retiring) covers it. Only the holder's own sub-claims
   * count: another node's sub-claim of an address this node holds may be given back by that node at
   * any time after the slot turned Shared, leaving the address free for a third node while this
   * node's pod uses it. The admission policy refuses such a sub-claim; one made anyway (before the
   * policy, or by hand) keeps the conversion from finishing, and the slot stays closed.
   */
  static boolean covered(NodeBlocks blocks, AddressKey address) {
    NodeBlocks.Own host =
        blocks.get(address.pool(), Cidr.of(address.ip(), address.ip().family().bits()));
    return host != null && !host.retiring;
  }

  /**
   * A conversion created the sub-claim {@code ref} of one address of a slot of this node: it is
   * this node's like any sub-claim, and goes back once its address is neither used nor resting (it
   * may have been taken for an allocation that then failed). Nothing, when it is known gone.
   */
  static void subClaimed(NodeBlocks blocks, BlockRef ref) {
    NodeBlocks.Own own = blocks.claimed(ref);
    if (own != null) {
      own.giveBack = true;
    }
  }
}
