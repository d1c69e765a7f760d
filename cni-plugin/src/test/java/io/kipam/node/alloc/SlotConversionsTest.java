package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Which slots {@link SlotConversions} converts now, and what each still has to sub-claim. */
class SlotConversionsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final NodeBlocks blocks = new NodeBlocks();
  private final SharedSlots shared = new SharedSlots();

  private static AddressKey key(String ip) {
    return new AddressKey("p", IpAddress.parse(ip));
  }

  private static BlockRef ref(String cidr) {
    return new BlockRef("p", Cidr.parse(cidr), "uid-" + cidr);
  }

  private static BlockObject slot(BlockRef ref, String shareRequestedAt) {
    return new BlockObject(ref, "1", true, null, null, 0L, false, false, shareRequestedAt);
  }

  private static Supplier<Set<AddressKey>> of(AddressKey... keys) {
    return () -> new HashSet<>(Set.of(keys));
  }

  @Test
  void aConvertingSlotStillMissesTheAddressesNoLiveSubClaimOfItsOwnCovers() {
    BlockRef converting = ref("10.0.0.0/29");
    blocks.seen(slot(converting, "round-1"), T0);
    blocks.seen(slot(ref("10.0.0.8/29"), null), T0); // not asked to convert
    blocks.claimed(ref("10.0.0.2/32")); // this node's sub-claim
    // Another node's sub-claim of an address this node holds does not count: that node may give
    // it back once the slot is Shared.
    shared.subClaimSeen(key("10.0.0.3"), "uid-other", converting.name());
    BlockRef retiring = ref("10.0.0.4/32");
    blocks.claimed(retiring);
    blocks.retireIfEmpty(retiring, Set.of()); // going back: covers nothing
    shared.subClaimSeen(key("10.0.0.4"), "uid-4", converting.name());

    List<Conversion> pending =
        SlotConversions.pending(
            blocks,
            of(key("10.0.0.2"), key("10.0.0.3"), key("10.0.0.4"), key("10.0.0.9")),
            of(key("10.0.0.5")));

    assertThat(pending).hasSize(1);
    assertThat(pending.get(0).slot().ref()).isEqualTo(converting);
    assertThat(pending.get(0).missing())
        .containsExactly(
            IpAddress.parse("10.0.0.3"), IpAddress.parse("10.0.0.4"), IpAddress.parse("10.0.0.5"));
  }

  @Test
  void withNoSlotConvertingTheAddressesAreNotEvenAskedFor() {
    blocks.seen(slot(ref("10.0.0.0/29"), null), T0);
    Supplier<Set<AddressKey>> never =
        () -> {
          throw new AssertionError("asked for addresses");
        };

    assertThat(SlotConversions.pending(blocks, never, never)).isEmpty();
  }

  @Test
  void aSubClaimAConversionMadeGoesBackOnceIdleUnlessItIsGoneAlready() {
    BlockRef made = ref("10.0.0.2/32");
    SlotConversions.subClaimed(blocks, made);
    assertThat(blocks.get(made).giveBack).isTrue();
    assertThat(SlotConversions.covered(blocks, key("10.0.0.2"))).isTrue();

    BlockRef gone = ref("10.0.0.3/32");
    blocks.gone(gone);
    SlotConversions.subClaimed(blocks, gone);
    assertThat(blocks.get(gone)).isNull();
    assertThat(SlotConversions.covered(blocks, key("10.0.0.3"))).isFalse();
  }
}
