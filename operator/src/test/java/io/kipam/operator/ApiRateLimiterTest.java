package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ApiRateLimiterTest {

  private final AtomicLong now = new AtomicLong();
  private final ApiRateLimiter limiter = new ApiRateLimiter(10, 3, now::get);

  @Test
  void aBurstPassesAtOnceThenRequestsArePaced() {
    assertThat(limiter.reserve()).isZero();
    assertThat(limiter.reserve()).isZero();
    assertThat(limiter.reserve()).isZero();

    assertThat(limiter.reserve()).isEqualTo(100_000_000L);
    assertThat(limiter.reserve()).isEqualTo(200_000_000L);
  }

  @Test
  void tokensComeBackAtTheRateUpToTheBurst() {
    for (int i = 0; i < 3; i++) {
      limiter.reserve();
    }
    now.addAndGet(10_000_000_000L);

    assertThat(limiter.reserve()).isZero();
    assertThat(limiter.reserve()).isZero();
    assertThat(limiter.reserve()).isZero();
    assertThat(limiter.reserve()).isPositive();
  }
}
