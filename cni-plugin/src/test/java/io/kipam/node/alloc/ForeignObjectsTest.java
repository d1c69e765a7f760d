package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Which objects of other nodes {@link ForeignObjects} remembers, and when each is read again. */
class ForeignObjectsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration EVERY = Duration.ofSeconds(30);
  private static final Lease A = lease("10.0.0.1", "a");

  private static Lease lease(String ip, String uid) {
    return new Lease(
        "p",
        IpAddress.parse(ip),
        Cidr.parse("10.0.0.0/28"),
        "node-b",
        "net",
        new Attachment("c-" + uid, "eth0"),
        new PodRef("q", "pod-" + uid, "pod-uid-" + uid),
        null,
        uid);
  }

  /** Objects of other nodes, room for ten, that have read {@code lease} at {@link #T0}. */
  private static ForeignObjects seenAtT0(Lease lease) {
    ForeignObjects foreign = new ForeignObjects(10);
    foreign.seen(lease, T0);
    return foreign;
  }

  @Test
  void anObjectIsDueOnceEveryIntervalFromItsLastRead() {
    ForeignObjects foreign = seenAtT0(A);

    assertThat(foreign.due(EVERY, T0.plusSeconds(29))).isEmpty();
    assertThat(foreign.due(EVERY, T0.plusSeconds(30))).containsExactly(A);
    assertThat(foreign.due(EVERY, T0.plusSeconds(59))).isEmpty();
    assertThat(foreign.due(EVERY, T0.plusSeconds(60))).containsExactly(A);
  }

  @Test
  void seeingAnObjectAgainRenewsItsLastRead() {
    ForeignObjects foreign = seenAtT0(A);
    foreign.seen(A, T0.plusSeconds(20));

    assertThat(foreign.size()).isOne();
    assertThat(foreign.due(EVERY, T0.plusSeconds(30))).isEmpty();
    assertThat(foreign.due(EVERY, T0.plusSeconds(50))).containsExactly(A);
  }

  @Test
  void aGoneObjectIsForgotten() {
    ForeignObjects foreign = seenAtT0(A);
    assertThat(foreign.contains(A.object())).isTrue();

    foreign.gone(A.object());

    assertThat(foreign.contains(A.object())).isFalse();
    assertThat(foreign.due(EVERY, T0.plus(EVERY))).isEmpty();
    assertThat(foreign.size()).isZero();
  }

  @Test
  void onceFullNewObjectsAreNotRememberedButKnownOnesAreRenewed() {
    ForeignObjects foreign = new ForeignObjects(2);
    Lease a = lease("10.0.0.1", "a");
    Lease b = lease("10.0.0.2", "b");
    Lease c = lease("10.0.0.3", "c");
    foreign.seen(a, T0);
    foreign.seen(b, T0);
    foreign.seen(c, T0);

    assertThat(foreign.size()).isEqualTo(2);
    assertThat(foreign.contains(c.object())).isFalse();

    foreign.seen(a, T0.plusSeconds(20));
    assertThat(foreign.due(EVERY, T0.plusSeconds(30))).containsExactly(b);
  }
}
