package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What {@link AddressObjects} records of each IPAddress object, and what a gone one changes. */
class AddressObjectsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final AddressObjects objects = new AddressObjects();

  private static Lease lease(String ip, String namespace, String container, String uid) {
    return new Lease(
        "p",
        IpAddress.parse(ip),
        Cidr.parse("10.0.0.0/28"),
        "node-a",
        "net",
        new Attachment(container, "eth0"),
        new PodRef(namespace, "pod-" + container, "pod-uid-" + container),
        null,
        uid);
  }

  @Test
  void anObjectHoldsItsAddressAndIsItsAttachmentsUntilItIsGone() {
    Lease a = lease("10.0.0.1", "q", "c1", "uid-a");
    objects.seen(a, T0);

    assertThat(objects.held(a.address())).isTrue();
    assertThat(objects.holds(a)).isTrue();
    assertThat(objects.taken(a.address())).isTrue();
    assertThat(objects.leaseOf("p", a.attachment())).contains(a);
    assertThat(objects.leases(ref -> false)).containsExactly(a);
    assertThat(objects.leases(ref -> true)).isEmpty();

    assertThat(objects.gone(a.address(), a.object())).isTrue();

    assertThat(objects.held(a.address())).isFalse();
    assertThat(objects.leaseOf("p", a.attachment())).isEmpty();
    assertThat(objects.sizes()).containsEntry("holders", 0).containsEntry("attachments", 0);
  }

  @Test
  void anAddressHeldTwiceStaysTakenUntilItsLastHolderIsGone() {
    Lease first = lease("10.0.0.1", "q1", "c1", "uid-1");
    Lease second = lease("10.0.0.1", "q2", "c1", "uid-2"); // same attachment, another namespace
    objects.seen(first, T0);
    objects.seen(second, T0);
    assertThat(objects.leaseOf("p", first.attachment())).contains(first);

    assertThat(objects.gone(first.address(), first.object())).isFalse();
    assertThat(objects.held(first.address())).isTrue();
    assertThat(objects.leaseOf("p", first.attachment())).contains(second);

    // A replayed delete of the first holder changes nothing.
    assertThat(objects.gone(first.address(), first.object())).isFalse();
    assertThat(objects.held(first.address())).isTrue();

    assertThat(objects.gone(second.address(), second.object())).isTrue();
  }

  @Test
  void anUnreadableObjectTakesItsAddressWithoutBeingAHolder() {
    AddressKey address = new AddressKey("p", IpAddress.parse("10.0.0.2"));
    ObjectRef ref = new ObjectRef("q", "uid-x");
    objects.unreadableSeen(address, ref);

    assertThat(objects.taken(address)).isTrue();
    assertThat(objects.held(address)).isFalse();
    Set<AddressKey> taken = new HashSet<>();
    objects.addTakenTo(taken);
    assertThat(taken).containsExactly(address);

    assertThat(objects.gone(address, ref)).isFalse(); // no readable holder went
    assertThat(objects.taken(address)).isFalse();
  }

  @Test
  void anObjectsAgeCountsFromWhenItWasFirstSeen() {
    Lease a = lease("10.0.0.1", "q", "c1", "uid-a");
    objects.seen(a, T0);
    objects.seen(a, T0.plusSeconds(50));

    assertThat(objects.olderThan(a.object(), Duration.ofSeconds(60), T0.plusSeconds(59))).isFalse();
    assertThat(objects.olderThan(a.object(), Duration.ofSeconds(60), T0.plusSeconds(60))).isTrue();
    assertThat(objects.olderThan(new ObjectRef("q", "other"), Duration.ZERO, T0)).isFalse();
  }

  @Test
  void anObjectThisNodeDeletedIsNotRevivedByALateEventUntilItsTombstoneExpires() {
    Lease a = lease("10.0.0.1", "q", "c1", "uid-a");
    objects.seen(a, T0);
    objects.gone(a.address(), a.object());
    objects.deleted(a.object(), T0);

    objects.seen(a, T0.plusSeconds(1));
    assertThat(objects.held(a.address())).isFalse();

    // Another deletion after the TTL drops the old tombstone.
    Lease b = lease("10.0.0.2", "q", "c2", "uid-b");
    objects.deleted(b.object(), T0.plus(AddressObjects.TOMBSTONE_TTL).plusSeconds(1));
    assertThat(objects.sizes()).containsEntry("tombstones", 1);
    objects.seen(a, T0.plus(AddressObjects.TOMBSTONE_TTL).plusSeconds(2));
    assertThat(objects.held(a.address())).isTrue();
  }

  @Test
  void theWatchsDeleteEventEndsATombstone() {
    Lease a = lease("10.0.0.1", "q", "c1", "uid-a");
    objects.deleted(a.object(), T0);
    assertThat(objects.sizes()).containsEntry("tombstones", 1);

    objects.gone(a.address(), a.object());

    assertThat(objects.sizes()).containsEntry("tombstones", 0);
  }

  @Test
  void atMostMaxTombstonesAreKept() {
    for (int i = 0; i < AddressObjects.MAX_TOMBSTONES + 10; i++) {
      objects.deleted(new ObjectRef("q", "uid-" + i), T0);
    }
    assertThat(objects.sizes()).containsEntry("tombstones", AddressObjects.MAX_TOMBSTONES);
  }
}
