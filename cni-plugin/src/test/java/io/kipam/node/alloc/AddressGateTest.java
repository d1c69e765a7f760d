package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The gate's table: every invariant of an ADD's write, each broken once, refused with its kind and
 * a message naming it; and the writes that keep them all, admitted. Whatever source proposes the
 * candidate, the gate sees only the request, the pool and the lease.
 */
class AddressGateTest {

  private final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
  private final Ledger ledger = new Ledger("node-a", clock);
  private final FakeStore store = new FakeStore();
  private final AddressGate gate = new AddressGate(ledger, store);

  private static PoolView pool(String name, String cidr, String network) {
    return new PoolView(
            name, PoolLayout.builder().cidr(cidr).blockSize(28).build(), Duration.ofSeconds(30), 0)
        .withNetwork(network);
  }

  private final PoolView blue = pool("blue-a", "192.168.0.0/24", "blue");
  private final PoolView red = pool("red-a", "192.168.0.0/24", "red");
  private final PoolView blueToo = pool("blue-b", "192.168.1.0/24", "blue");

  AddressGateTest() {
    ledger.markSynced();
  }

  private static AddRequest request(String poolNetwork, PoolView... pools) {
    return new AddRequest(
        NodeFixture.attachment(1),
        NodeFixture.pod(1),
        "net1-conf",
        poolNetwork,
        null,
        List.of(new AddRequest.Family(List.of(pools), new AddRequest.Dynamic())));
  }

  /** {@code request}'s pod and interface, asking for IPAMClaim {@code claim}'s address in blue. */
  private AddRequest claimedBy(String claim, AddRequest request) {
    ClaimStore.Claim bound =
        new ClaimStore.Claim("q1", claim, "claim-uid", "net1-conf", "eth0", null, false);
    return new AddRequest(
        request.attachment(),
        request.pod(),
        request.network(),
        "blue",
        null,
        List.of(
            new AddRequest.Family(
                List.of(blue), new AddRequest.Claimed(bound, java.util.Optional.empty()))));
  }

  private Lease lease(AddRequest request, PoolView pool, String ip, String block) {
    return request.unwritten(pool, IpAddress.parse(ip), Cidr.parse(block), "node-a");
  }

  /** A write of {@code ip} in {@code block} of {@code pool} is refused as a bad configuration. */
  private void invalid(AddRequest request, PoolView pool, String ip, String block, String message) {
    refused(request, pool, lease(request, pool, ip, block), Refusal.Kind.INVALID_CONFIG, message);
  }

  private void refused(
      AddRequest request, PoolView pool, Lease lease, Refusal.Kind kind, String message) {
    assertThatThrownBy(() -> gate.admit(request, pool, lease))
        .isInstanceOfSatisfying(Refusal.class, r -> assertThat(r.kind()).isEqualTo(kind))
        .hasMessageContaining(message)
        .hasMessageContaining("pod q1/pod-1, interface eth0");
  }

  @Test
  void aPoolTheRequestMayNotUseIsRefused() {
    AddRequest request = request("blue", blue);
    invalid(
        request,
        blueToo,
        "192.168.1.5",
        "192.168.1.0/28",
        "pool blue-b is not among the pools the attachment may use");
  }

  @Test
  void aPoolOfAnotherNetworkThanTheInterfacesIsRefused() {
    AddRequest request = request("blue", blue, red);
    invalid(
        request,
        red,
        "192.168.0.5",
        "192.168.0.0/28",
        "pool red-a belongs to network red, but the interface's network configuration net1-conf"
            + " gives addresses of network blue");
  }

  @Test
  void anAddressThePoolDoesNotHandOutOrOutsideItsBlockIsRefused() {
    AddRequest request = request("blue", blue);
    invalid(
        request,
        blue,
        "192.168.0.0",
        "192.168.0.0/28",
        "address 192.168.0.0 is not one pool blue-a hands out");
    invalid(
        request, blue, "192.168.0.5", "192.168.0.16/28", "does not lie in block 192.168.0.16/28");
  }

  @Test
  void aRestingAddressIsRefusedToEveryNewHolderButNotToItsClaim() {
    AddRequest request = request("blue", blue);
    Lease pods = lease(request, blue, "192.168.0.5", "192.168.0.0/28");
    ledger.releasing(pods);
    refused(request, blue, pods, Refusal.Kind.TRY_AGAIN, "rests for the pool's reuse delay (30 s)");

    AddRequest claimed = claimedBy("vm-1.blue", request);
    Lease claims = lease(claimed, blue, "192.168.0.5", "192.168.0.5/32").withObjectUid("o-1");
    ledger.releasing(claims); // the claim's pod ended its attachment; the claim keeps the address
    assertThatCode(() -> gate.admit(claimed, blue, claims)).doesNotThrowAnyException();
    refused(request, blue, pods, Refusal.Kind.TRY_AGAIN, "rests for the pool's reuse delay");

    clock.advance(Duration.ofSeconds(30));
    assertThatCode(() -> gate.admit(request, blue, pods)).doesNotThrowAnyException();
  }

  /**
   * The whole release of a claim's attachment, as a DEL makes it: the object known, its release
   * recorded, its delete done (and seen again by the watch). The claim's next pod gets its address
   * at once; the rest of the pool's reuse delay is for other holders.
   */
  @Test
  void aClaimsAddressStaysItsOwnAfterItsObjectIsGone() {
    AddRequest request = request("blue", blue);
    AddRequest claimed = claimedBy("vm-1.blue", request);
    Lease claims = lease(claimed, blue, "192.168.0.7", "192.168.0.7/32").withObjectUid("o-7");
    ledger.leaseSeen(claims);
    ledger.releasing(claims);
    ledger.released(claims);
    ledger.objectGone(claims.address(), claims.object());

    assertThatCode(() -> gate.admit(claimed, blue, claims)).doesNotThrowAnyException();
    Lease pods = lease(request, blue, "192.168.0.7", "192.168.0.0/28");
    refused(request, blue, pods, Refusal.Kind.TRY_AGAIN, "rests for the pool's reuse delay");
  }

  @Test
  void aWriteThatKeepsEveryInvariantIsAdmittedForAHostPrefixSubClaimToo() {
    AddRequest request = request("blue", blue, blueToo);
    assertThatCode(
            () ->
                gate.admit(
                    request, blueToo, lease(request, blueToo, "192.168.1.9", "192.168.1.0/28")))
        .doesNotThrowAnyException();
    assertThatCode(
            () ->
                gate.admit(
                    request, blueToo, lease(request, blueToo, "192.168.1.9", "192.168.1.9/32")))
        .doesNotThrowAnyException();
  }
}
