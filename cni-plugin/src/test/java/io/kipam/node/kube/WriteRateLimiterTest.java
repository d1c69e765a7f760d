package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WriteRateLimiterTest {

  private final AtomicLong now = new AtomicLong();
  private final WriteRateLimiter limiter = new WriteRateLimiter(50, 100, now::get);

  @Test
  void aBurstPassesAtOnceThenWritesAreSpacedByTheRate() {
    for (int i = 0; i < 100; i++) {
      assertThat(limiter.reserve()).isZero();
    }
    assertThat(limiter.reserve()).isEqualTo(20_000_000L);
    assertThat(limiter.reserve()).isEqualTo(40_000_000L);
  }

  @Test
  void tokensComeBackWithTimeButNeverAboveTheBurst() {
    for (int i = 0; i < 100; i++) {
      limiter.reserve();
    }
    now.addAndGet(1_000_000_000L);
    for (int i = 0; i < 50; i++) {
      assertThat(limiter.reserve()).isZero();
    }
    assertThat(limiter.reserve()).isPositive();
    now.addAndGet(3_600_000_000_000L);
    for (int i = 0; i < 100; i++) {
      assertThat(limiter.reserve()).isZero();
    }
    assertThat(limiter.reserve()).isPositive();
  }

  @Test
  void nonsenseSettingsAreRefused() {
    assertThatThrownBy(() -> new WriteRateLimiter(0, 10))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new WriteRateLimiter(5, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
