package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The claimed source over a family of several pools: a claim keeps the address it holds in any pool
 * of the family, and takes a new one, in the first pool that has one, only when it holds none.
 */
class ClaimedSourceTest {

  private static final String NETWORK = "net-a";

  private final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
  private final FakeStore store = new FakeStore();
  private final FakeClaimStore claims = new FakeClaimStore(store);
  private final Ledger ledger = new Ledger("node-a", clock);
  private final Allocator allocator =
      new Allocator(ledger, store, claims, null, new Random(5), Allocator.DEFAULT_SETTLE_AFTER);
  private final PoolView first = AllocatorTest.pool("first", "10.0.0.0/24", 28, 0);
  private final PoolView second = AllocatorTest.pool("second", "10.1.0.0/24", 28, 0);

  ClaimedSourceTest() {
    ledger.markSynced();
  }

  private AddRequest request(int i, ClaimStore.Claim claim, List<PoolView> pools) {
    return new AddRequest(
        new Attachment("container-" + i, "eth0"),
        new PodRef(claim.namespace(), "pod-" + i, "uid-" + i),
        NETWORK,
        PoolView.PRIMARY,
        null,
        List.of(new AddRequest.Family(pools, new AddRequest.Claimed(claim, Optional.empty()))));
  }

  private ClaimStore.Claim fresh(ClaimStore.Claim claim) {
    return claims.readClaim(claim.namespace(), claim.name()).orElseThrow();
  }

  /**
   * A claim that got its address from the family's second pool (the first was left out then, as
   * when it was exhausted) keeps it when a later pod's family offers the first pool again.
   */
  @Test
  void aClaimKeepsItsAddressInALaterPoolOfTheFamily() {
    ClaimStore.Claim claim = claims.add("q1", "vm-1." + NETWORK, NETWORK);
    Lease held = allocator.allocate(request(1, fresh(claim), List.of(second))).get(0);
    allocator.release(List.of(second.name()), held.attachment(), Optional.empty());

    Lease again = allocator.allocate(request(2, fresh(claim), List.of(first, second))).get(0);

    assertThat(again.pool()).isEqualTo(second.name());
    assertThat(again.ip()).isEqualTo(held.ip());
    assertThat(claims.subClaimsOf(first.name(), claim.uid()))
        .as("nothing taken in first")
        .isEmpty();
  }

  @Test
  void aClaimWithoutAnAddressTakesOneInTheFirstPool() {
    ClaimStore.Claim claim = claims.add("q2", "vm-2." + NETWORK, NETWORK);
    Lease lease = allocator.allocate(request(3, fresh(claim), List.of(first, second))).get(0);
    assertThat(lease.pool()).isEqualTo(first.name());
    assertThat(claims.subClaimsOf(first.name(), claim.uid())).containsExactly(lease.ip());
    assertThat(fresh(claim).ips()).containsExactly(lease.ip() + "/24");
    assertThat(IpAddress.parse("10.0.0.0").family()).isEqualTo(lease.ip().family());
  }
}
