package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Which writes with an unknown outcome {@link UncertainWrites} keeps, finds and forgets. */
class UncertainWritesTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final UncertainWrites writes = new UncertainWrites();

  private static Lease lease(String pool, String ip, String container) {
    return new Lease(
        pool,
        IpAddress.parse(ip),
        Cidr.parse("10.0.0.0/28"),
        "node-a",
        "net",
        new Attachment(container, "eth0"),
        new PodRef("q", "pod-" + container, "uid-" + container),
        null,
        null);
  }

  @Test
  void theFirstUncertainWriteOfAnAddressIsTheOneKept() {
    Lease first = lease("p", "10.0.0.1", "c1");
    writes.add(first, false, T0);
    writes.add(lease("p", "10.0.0.1", "c2"), true, T0.plusSeconds(5));

    assertThat(writes.size()).isOne();
    assertThat(writes.contains(first.address())).isTrue();
    assertThat(writes.addresses()).containsExactly(first.address());
    assertThat(writes.of("p", first.attachment())).contains(new Uncertain(first, T0, false));
  }

  @Test
  void anAttachmentFindsOnlyItsOwnWriteInItsPoolAndNotOneWhoseNameIsTaken() {
    Lease mine = lease("p", "10.0.0.1", "c1");
    Lease taken = lease("p", "10.0.0.2", "c2");
    writes.add(mine, false, T0);
    writes.add(taken, true, T0);

    assertThat(writes.of("p", mine.attachment())).map(Uncertain::wanted).contains(mine);
    assertThat(writes.of("other", mine.attachment())).isEmpty();
    assertThat(writes.of("p", taken.attachment())).isEmpty();
  }

  @Test
  void theWritesDueAreThoseUncertainSinceTheCutoffOrEarlier() {
    Lease old = lease("p", "10.0.0.1", "c1");
    Lease young = lease("p", "10.0.0.2", "c2");
    writes.add(old, false, T0);
    writes.add(young, false, T0.plusSeconds(10));

    assertThat(writes.since(T0.minusSeconds(1))).isEmpty();
    assertThat(writes.since(T0)).extracting(Uncertain::wanted).containsExactly(old);
    assertThat(writes.since(T0.plusSeconds(10)))
        .extracting(Uncertain::wanted)
        .containsExactlyInAnyOrder(old, young);
  }

  @Test
  void aSettledWriteIsForgottenOnceAndOnlyIfItIsStillTheAddressesOwn() {
    Lease first = lease("p", "10.0.0.1", "c1");
    writes.add(first, false, T0);
    Uncertain u = writes.of("p", first.attachment()).orElseThrow();

    assertThat(writes.settled(new Uncertain(first, T0.plusSeconds(1), false))).isFalse();
    assertThat(writes.contains(first.address())).isTrue();
    assertThat(writes.settled(u)).isTrue();
    assertThat(writes.contains(first.address())).isFalse();
    assertThat(writes.settled(u)).isFalse();
  }

  @Test
  void anAdoptedAddressIsSettledOnlyForTheAttachmentThatWroteIt() {
    Lease mine = lease("p", "10.0.0.1", "c1");
    writes.add(mine, false, T0);

    writes.adopted(lease("p", "10.0.0.1", "c2"));
    assertThat(writes.contains(mine.address())).isTrue();

    writes.adopted(mine);
    assertThat(writes.size()).isZero();
  }
}
