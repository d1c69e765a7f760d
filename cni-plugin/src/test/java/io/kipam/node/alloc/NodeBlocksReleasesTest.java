package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Instant;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The release bookkeeping of this node's blocks, as {@link NodeBlocks} keeps it. */
class NodeBlocksReleasesTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final NodeBlocks blocks = new NodeBlocks();

  private static AddressKey key(String ip) {
    return new AddressKey("p", IpAddress.parse(ip));
  }

  private static BlockRef ref(String cidr) {
    return new BlockRef("p", Cidr.parse(cidr), "uid-" + cidr);
  }

  private static BlockObject block(BlockRef ref, String version, ReleaseState release) {
    return new BlockObject(ref, version, true, release, release == null ? null : "round-1", 0L);
  }

  @Test
  void aRequestedReleaseIsDecidedOnWhatIsInUseAndWhatRestsInTheBlock() {
    BlockObject requested = block(ref("10.0.0.0/29"), "1", ReleaseState.Requested);
    blocks.seen(requested, T0);
    blocks.seen(block(ref("10.0.0.8/29"), "1", null), T0);

    assertThat(
            blocks.pendingReleases(
                () -> Set.of(key("10.0.0.1"), key("10.0.0.9")),
                () -> Set.of(key("10.0.0.2"), key("10.0.0.3"))))
        .containsExactly(new ReleaseDecision(requested, 1, 2));
  }

  @Test
  void withNoReleaseRequestedTheAddressesAreNotEvenAskedFor() {
    blocks.seen(block(ref("10.0.0.0/29"), "1", null), T0);
    Supplier<Set<AddressKey>> never =
        () -> {
          throw new AssertionError("asked for addresses");
        };

    assertThat(blocks.pendingReleases(never, never)).isEmpty();
  }

  @Test
  void aReadyAnswerCountsFromWhenItWasFirstSeenInItsRound() {
    BlockRef ref = ref("10.0.0.0/29");
    blocks.seen(block(ref, "1", ReleaseState.Ready), T0);
    blocks.seen(block(ref, "2", ReleaseState.Ready), T0.plusSeconds(30));

    assertThat(blocks.readySince(T0.minusSeconds(1))).isEmpty();
    assertThat(blocks.readySince(T0)).extracting(BlockObject::ref).containsExactly(ref);

    blocks.seen(
        new BlockObject(ref, "3", true, ReleaseState.Ready, "round-1", 0L, true),
        T0.plusSeconds(40));
    assertThat(blocks.readySince(T0.plusSeconds(60))).isEmpty(); // being deleted: not abandoned
  }

  @Test
  void aWrittenAnswerIsRecordedUnlessTheWatchShowedANewerState() {
    BlockRef ref = ref("10.0.0.0/29");
    BlockObject decided = block(ref, "1", ReleaseState.Requested);
    blocks.seen(decided, T0);

    blocks.answered(decided, block(ref, "2", ReleaseState.Ready), T0.plusSeconds(5));
    assertThat(blocks.get(ref).object.resourceVersion()).isEqualTo("2");
    assertThat(blocks.readySince(T0.plusSeconds(4))).isEmpty();
    assertThat(blocks.readySince(T0.plusSeconds(5))).hasSize(1);

    BlockObject newer = block(ref, "3", null);
    blocks.seen(newer, T0.plusSeconds(6));
    blocks.answered(decided, block(ref, "4", ReleaseState.Ready), T0.plusSeconds(7));
    assertThat(blocks.get(ref).object).isEqualTo(newer);
  }
}
