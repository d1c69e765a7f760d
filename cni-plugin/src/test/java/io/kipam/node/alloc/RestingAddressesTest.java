package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.IpAddress;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How long an address rests after its release, as {@link RestingAddresses} tells. */
class RestingAddressesTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final RestingAddresses resting = new RestingAddresses();

  private static AddressKey key(String pool, String ip) {
    return new AddressKey(pool, IpAddress.parse(ip));
  }

  @Test
  void anAddressRestsForItsPoolsReuseDelayAfterItsLatestRelease() {
    AddressKey a = key("p", "10.0.0.1");
    resting.poolSeen("p", Duration.ofSeconds(10));
    resting.rest(a, T0.plusSeconds(5));
    resting.rest(a, T0); // an older release changes nothing

    assertThat(resting.releasedAt(a)).isEqualTo(T0.plusSeconds(5));
    assertThat(resting.restingAt(T0.plusSeconds(14)).test(a)).isTrue();
    assertThat(resting.restingAt(T0.plusSeconds(15)).test(a)).isFalse();
    assertThat(resting.allRestingAt(T0.plusSeconds(14))).containsExactly(a);
    assertThat(resting.allRestingAt(T0.plusSeconds(15))).isEmpty();
  }

  @Test
  void aNeverReleasedAddressNeverRestsAndCountsAsReleasedLongAgo() {
    AddressKey a = key("p", "10.0.0.1");
    resting.poolSeen("p", Duration.ofSeconds(10));

    assertThat(resting.releasedAt(a)).isEqualTo(Instant.EPOCH);
    assertThat(resting.restingAt(T0).test(a)).isFalse();
    assertThat(resting.resting(a, Duration.ofDays(1), T0)).isFalse();
  }

  @Test
  void anyRememberedReleaseRestsWhileItsPoolsReuseDelayIsUnknown() {
    AddressKey a = key("p", "10.0.0.1");
    AddressKey b = key("q", "10.0.0.1");
    resting.rest(a, T0);
    resting.rest(b, T0);
    resting.poolSeen("q", Duration.ofSeconds(10));

    Instant muchLater = T0.plus(Duration.ofDays(30));
    assertThat(resting.restingAt(muchLater).test(a)).isTrue();
    assertThat(resting.allRestingAt(muchLater)).containsExactly(a);

    resting.poolSeen("p", Duration.ofSeconds(10));
    assertThat(resting.allRestingAt(muchLater)).isEmpty();

    resting.poolGone("p");
    assertThat(resting.allRestingAt(muchLater)).containsExactly(a);
  }

  @Test
  void pruningDropsOnlyReleasesOlderThanTheLongestReuseDelayInUse() {
    AddressKey old = key("p", "10.0.0.1");
    AddressKey young = key("p", "10.0.0.2");
    resting.rest(old, T0);
    resting.rest(young, T0.plusSeconds(50));

    resting.prune(T0.plusSeconds(100)); // no delay known yet: everything may matter
    assertThat(resting.size()).isEqualTo(2);

    resting.poolSeen("p", Duration.ofSeconds(10));
    resting.poolSeen("q", Duration.ofSeconds(60));
    resting.prune(T0.plusSeconds(100));

    assertThat(resting.remembered()).containsExactly(young);
  }
}
