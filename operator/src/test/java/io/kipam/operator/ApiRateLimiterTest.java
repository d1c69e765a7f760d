package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
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
  void watchesAndLeaseRequestsAreNotCounted() {
    assertThat(ApiRateLimiter.limited(URI.create("https://api/apis/kipam.io/v1alpha1/ipblocks")))
        .isTrue();
    assertThat(
            ApiRateLimiter.limited(
                URI.create(
                    "https://api/apis/kipam.io/v1alpha1/ipblocks?labelSelector=a&watch=true")))
        .isFalse();
    assertThat(
            ApiRateLimiter.limited(
                URI.create(
                    "https://api/apis/coordination.k8s.io/v1/namespaces/kipam-system/leases/x")))
        .isFalse();
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
