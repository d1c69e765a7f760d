package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chosen-address source (design §5b, static addresses) against the fakes: the reuse delay holds
 * for a chosen address as for any other, whichever namespace asks; an address held in another
 * node's Exclusive slot is refused without asking for the slot's conversion. Pods are spread over
 * three namespaces.
 */
class ChosenSourceTest {

  @RegisterExtension final NodeFixture fixture = new NodeFixture();

  private final long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());

  ChosenSourceTest() {
    System.out.println("seed " + seed + " (-Dkipam.seed=" + seed + " repeats it)");
  }

  private static PoolView pool(int reuseDelaySeconds) {
    return new PoolView(
        "p4",
        PoolLayout.builder().cidr("10.0.0.0/24").blockSize(28).build(),
        Duration.ofSeconds(reuseDelaySeconds),
        0);
  }

  private static AddRequest chosen(PoolView pool, int i, IpAddress ip) {
    return new AddRequest(
        NodeFixture.attachment(i),
        NodeFixture.pod(i),
        NodeFixture.NETWORK,
        pool.network(),
        null,
        List.of(new AddRequest.Family(List.of(pool), new AddRequest.Chosen(ip))));
  }

  /**
   * Measured before: another namespace took an address by {@code IP=} 0.1 s after its release on
   * the same node, while a dynamic ADD beside it was told to wait.
   */
  @Test
  void aReleasedAddressRestsForTheReuseDelayWhoeverAsksForItByName() {
    PoolView pool = pool(30);
    NodeFixture.Node a = fixture.node("node-a", seed);
    Lease first = a.add(pool, 1);
    a.del(pool, 1);
    fixture.clock.advance(Duration.ofMillis(100));

    int other = 2 + (int) Math.floorMod(seed, 3); // another namespace than pod 1's, by the seed
    assertThatThrownBy(() -> a.allocator.allocate(chosen(pool, other, first.ip())))
        .isInstanceOfSatisfying(
            Refusal.class, r -> assertThat(r.kind()).isEqualTo(Refusal.Kind.TRY_AGAIN))
        .hasMessageContaining("address " + first.ip() + " of pool p4 was released a moment ago")
        .hasMessageContaining("30 s");
    assertThat(a.add(pool, 10).ip()).as("a dynamic ADD beside it").isNotEqualTo(first.ip());
    assertThat(fixture.store.addresses.values())
        .noneMatch(l -> l.ip().equals(first.ip()) && l.pod().uid().equals("uid-" + other));

    fixture.clock.advance(Duration.ofSeconds(30));
    Lease later = a.allocator.allocate(chosen(pool, other, first.ip())).get(0);
    assertThat(later.ip()).isEqualTo(first.ip());
    assertThat(later.pod().namespace()).isEqualTo(NodeFixture.pod(other).namespace());
  }

  @Test
  void theSameAddressAskedAgainByItsOwnAttachmentIsItsOwnWithoutAWrite() {
    PoolView pool = pool(30);
    NodeFixture.Node a = fixture.node("node-a", seed);
    IpAddress ip = IpAddress.parse("10.0.0.7");
    Lease first = a.allocator.allocate(chosen(pool, 4, ip)).get(0);
    int writes = fixture.store.writes.get();

    assertThat(a.allocator.allocate(chosen(pool, 4, ip))).containsExactly(first);
    assertThat(fixture.store.writes.get()).isEqualTo(writes);
  }

  /**
   * Measured before: each chosen address inside another node's slot turned that slot Shared for
   * good, a refused one too. An address an IPAddress holds is refused at once, naming its pod, and
   * asks for no conversion.
   */
  @Test
  void anAddressHeldInAnotherNodesExclusiveSlotIsRefusedWithoutAskingForAConversion() {
    PoolView pool = pool(0);
    NodeFixture.Node a = fixture.node("node-a", seed);
    NodeFixture.Node b = fixture.node("node-b", seed + 1);
    Lease held = a.add(pool, 1);

    assertThatThrownBy(() -> b.allocator.allocate(chosen(pool, 2, held.ip())))
        .isInstanceOfSatisfying(
            Refusal.class,
            r -> {
              assertThat(r.kind()).isEqualTo(Refusal.Kind.ADDRESS_HELD);
              assertThat(r.slot()).as("no slot asked to become Shared").isEmpty();
            })
        .hasMessageContaining(
            "is held by pod "
                + held.pod().namespace()
                + "/"
                + held.pod().name()
                + " on node node-a");

    IpAddress free = held.ip().next();
    assertThatThrownBy(() -> b.allocator.allocate(chosen(pool, 3, free)))
        .as("a free address of that slot waits for its conversion")
        .isInstanceOfSatisfying(
            Refusal.class,
            r -> {
              assertThat(r.kind()).isEqualTo(Refusal.Kind.SHORT);
              assertThat(r.slot()).contains(held.block().toString());
            });
  }

  @Test
  void anAddressOutsideEveryPoolOfTheInterfaceIsRefusedNamingThem() {
    PoolView pool = pool(0);
    NodeFixture.Node a = fixture.node("node-a", seed);
    assertThatThrownBy(() -> a.allocator.allocate(chosen(pool, 5, IpAddress.parse("10.9.0.1"))))
        .isInstanceOfSatisfying(
            Refusal.class, r -> assertThat(r.kind()).isEqualTo(Refusal.Kind.INVALID_CONFIG))
        .hasMessageContaining("lies in no pool pod")
        .hasMessageContaining("the primary network (p4)");
    assertThat(fixture.store.addresses).isEmpty();
    assertThat(Optional.ofNullable(fixture.store.blocks.isEmpty() ? null : "blocks")).isEmpty();
  }
}
