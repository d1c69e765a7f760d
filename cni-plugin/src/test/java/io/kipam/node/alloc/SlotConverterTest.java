package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The holder's half of converting an Exclusive slot to Shared. */
class SlotConverterTest {

  /** Two slots of 10.0.0.0/28: 10.0.0.0/29 and 10.0.0.8/29, seven assignable addresses each. */
  private static final Cidr FIRST = Cidr.parse("10.0.0.0/29");

  @RegisterExtension final NodeFixture fixture = new NodeFixture();
  private final NodeFixture.Node a = fixture.node("node-a", 7);
  private final SlotConverter converter =
      new SlotConverter(a.ledger, fixture.store, fixture.status);

  private static PoolView pool(int reuseDelaySeconds) {
    return AllocatorTest.pool("p", "10.0.0.0/28", 29, reuseDelaySeconds);
  }

  /** Node-a holds the slot of its first lease, with {@code n} leases in it. */
  private BlockRef slotWith(PoolView pool, int n) {
    Lease first = a.add(pool, 0);
    for (int i = 1; i < n; i++) {
      assertThat(a.add(pool, i).block()).isEqualTo(first.block());
    }
    return a.block("p", first.block());
  }

  private Set<IpAddress> subClaimsOf(BlockRef slot, String node) {
    return fixture.store.blocks.entrySet().stream()
        .filter(e -> slot.name().equals(e.getValue().parent()))
        .filter(e -> node.equals(e.getValue().node()))
        .map(e -> ResourceNames.parseBlockLabel(e.getKey().substring(2)).network())
        .collect(Collectors.toSet());
  }

  private Set<IpAddress> leasedIn(BlockRef slot) {
    return fixture.store.addresses.values().stream()
        .map(Lease::ip)
        .filter(slot.cidr()::contains)
        .collect(Collectors.toSet());
  }

  /** The address the store holds for pod {@code i}. */
  private IpAddress addressOf(int i) {
    return fixture.store.addresses.values().stream()
        .filter(l -> l.attachment().equals(NodeFixture.attachment(i)))
        .findFirst()
        .orElseThrow()
        .ip();
  }

  /** The operator asks for {@code slot} to become Shared; the converter runs two rounds. */
  private void shareAndConvert(BlockRef slot) {
    fixture.status.requestShare(slot, "t1");
    converter.convert();
    converter.convert();
  }

  @Test
  void theSlotClosesAtTheRequestAndTurnsSharedOnlyAfterEveryHeldAddressIsSubClaimed() {
    PoolView pool = pool(0);
    BlockRef slot = slotWith(pool, 3);

    fixture.status.requestShare(slot, "t1");
    Lease elsewhere = a.add(pool, 3);
    assertThat(elsewhere.block())
        .as("nothing more from memory in a slot asked to convert")
        .isNotEqualTo(slot.cidr());

    converter.convert();
    assertThat(subClaimsOf(slot, "node-a")).isEqualTo(leasedIn(slot)).hasSize(3);
    assertThat(fixture.status.status(slot).shared())
        .as("not before a round that finds none missing")
        .isFalse();

    converter.convert();
    assertThat(fixture.status.status(slot).shared()).isTrue();
    assertThat(subClaimsOf(slot, "node-a")).hasSize(3);
  }

  @Test
  void afterConversionCountsGoToTheSubClaimsAndADelGivesBackTheAddressesSubClaim() {
    PoolView pool = pool(0);
    BlockRef slot = slotWith(pool, 2);
    IpAddress first = addressOf(0);
    shareAndConvert(slot);

    List<BlockUsage> usage = a.ledger.blocks().blockUsage();
    assertThat(usage)
        .filteredOn(u -> u.block().ref().equals(slot))
        .singleElement()
        .extracting(BlockUsage::allocated)
        .isEqualTo(0L);
    assertThat(usage)
        .filteredOn(u -> u.block().ref().hostPrefix())
        .hasSize(2)
        .allMatch(u -> u.allocated() == 1);

    a.del(pool, 0);

    assertThat(subClaimsOf(slot, "node-a")).doesNotContain(first).hasSize(1);
    assertThat(a.ledger.blocks().ownBlocks("p")).doesNotContain(Cidr.of(first, 32));
  }

  @Test
  void aRestingAddressIsSubClaimedTooAndGoesBackOnceItHasRested() {
    PoolView pool = pool(30);
    BlockRef slot = slotWith(pool, 2);
    IpAddress resting = addressOf(1);
    a.del(pool, 1);

    shareAndConvert(slot);
    assertThat(fixture.status.status(slot).shared()).isTrue();
    assertThat(subClaimsOf(slot, "node-a")).hasSize(2).contains(resting);

    a.allocator.returnBlocks();
    assertThat(subClaimsOf(slot, "node-a")).as("still resting").contains(resting);

    fixture.clock.advance(Duration.ofSeconds(31));
    a.allocator.returnBlocks();
    assertThat(subClaimsOf(slot, "node-a")).hasSize(1).doesNotContain(resting);
  }

  @Test
  void aConversionCutShortIsFinishedAfterARestartWhileTheRequestStands() {
    PoolView pool = pool(0);
    BlockRef slot = slotWith(pool, 3);
    fixture.status.requestShare(slot, "t1");
    // an earlier process sub-claimed one address, then stopped
    IpAddress done = leasedIn(slot).iterator().next();
    String uid = fixture.store.claimSubClaim("p", done, "node-a", slot.cidr());

    Ledger restarted = new Ledger("node-a", fixture.clock);
    fixture.status.watchedBy(restarted);
    restarted.blocks().ownBlockSeen(fixture.status.object(slot));
    BlockRef doneRef = new BlockRef("p", Cidr.of(done, 32), uid);
    restarted.blocks().ownBlockSeen(fixture.status.object(doneRef));
    fixture.store.addresses.values().forEach(restarted::leaseSeen);
    restarted.markSynced();
    SlotConverter afterRestart = new SlotConverter(restarted, fixture.store, fixture.status);

    afterRestart.convert();
    afterRestart.convert();

    assertThat(fixture.status.status(slot).shared()).isTrue();
    assertThat(subClaimsOf(slot, "node-a")).isEqualTo(leasedIn(slot)).hasSize(3);
    assertThat(fixture.store.blocks.get(doneRef.name()).uid()).as("made once").isEqualTo(uid);
    fixture.ledgers.remove(a.ledger);
    fixture.ledgers.add(restarted);
  }

  @Test
  void aConvertedSlotNoLongerCountsAgainstMaxBlocksPerNode() {
    PoolView capped =
        new PoolView("p", AllocatorTest.pool("p", "10.0.0.0/28", 29, 0).layout(), Duration.ZERO, 1);
    BlockRef slot = slotWith(capped, 7);
    assertThat(a.ledger.blocks().ownSlots(capped)).isEqualTo(1);

    shareAndConvert(slot);

    assertThat(a.ledger.blocks().ownSlots(capped)).isZero();
    assertThat(a.add(capped, 7).block().prefixLength())
        .as("a new Exclusive slot within the cap")
        .isEqualTo(29);
  }

  /**
   * Another node's sub-claim of an address this node holds (made before the admission policy
   * refused it, or by hand) would let that node give the address back once the slot is Shared: it
   * never counts, the slot stays Exclusive, and the create is not tried again every round.
   */
  @Test
  void anotherNodesSubClaimOfAHeldAddressNeverCountsAndTheSlotStaysExclusive() {
    long[] now = {0};
    SlotConverter timed = new SlotConverter(a.ledger, fixture.store, fixture.status, () -> now[0]);
    BlockRef slot = slotWith(pool(0), 2);
    IpAddress held = addressOf(0);
    assertThat(fixture.store.claimSubClaim("p", held, "node-b", slot.cidr())).isNotNull();

    fixture.status.requestShare(slot, "t1");
    for (int round = 0; round < 5; round++) {
      timed.convert();
      now[0] += Duration.ofSeconds(1).toNanos();
    }

    assertThat(fixture.status.status(slot).shared()).as("still Exclusive").isFalse();
    assertThat(subClaimsOf(slot, "node-a")).containsExactly(addressOf(1));
    assertThat(subClaimsOf(slot, "node-b")).containsExactly(held);

    // Once node-b's sub-claim is gone, the next try after the pause finishes the conversion.
    Cidr host = Cidr.of(held, 32);
    fixture.store.releaseBlock(
        "p", host, fixture.store.blocks.get(ResourceNames.blockName("p", host)).uid());
    now[0] += SlotConverter.TAKEN_RETRY.toNanos();
    timed.convert();
    timed.convert();
    timed.convert();
    assertThat(subClaimsOf(slot, "node-a")).containsExactlyInAnyOrder(held, addressOf(1));
    assertThat(fixture.status.status(slot).shared()).isTrue();
  }

  @Test
  void nothingHappensWithoutARequest() {
    PoolView pool = pool(0);
    BlockRef slot = slotWith(pool, 2);

    converter.convert();

    assertThat(subClaimsOf(slot, "node-a")).isEmpty();
    assertThat(fixture.status.status(slot).shared()).isFalse();
    assertThat(a.add(pool, 5).block()).isEqualTo(slot.cidr());
  }
}
