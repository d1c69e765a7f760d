package io.kipam.runtime.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TokenBucketTest {

  private final AtomicLong now = new AtomicLong();
  private final List<Long> waits = new ArrayList<>();

  private TokenBucket bucket(double qps, int burst) {
    return new TokenBucket(qps, burst, now::get, waits::add);
  }

  @AfterEach
  void clearInterrupt() {
    Thread.interrupted();
  }

  @Test
  void aBurstPassesAtOnceThenRequestsAreSpacedByTheRate() {
    TokenBucket bucket = bucket(50, 100);
    for (int i = 0; i < 100; i++) {
      assertThat(bucket.reserve()).isZero();
    }
    assertThat(bucket.reserve()).isEqualTo(20_000_000L);
    assertThat(bucket.reserve()).isEqualTo(40_000_000L);
  }

  @Test
  void aSmallBurstIsPacedAtALowRate() {
    TokenBucket bucket = bucket(10, 3);
    assertThat(bucket.reserve()).isZero();
    assertThat(bucket.reserve()).isZero();
    assertThat(bucket.reserve()).isZero();

    assertThat(bucket.reserve()).isEqualTo(100_000_000L);
    assertThat(bucket.reserve()).isEqualTo(200_000_000L);
  }

  @Test
  void tokensComeBackWithTimeButNeverAboveTheBurst() {
    TokenBucket bucket = bucket(50, 100);
    for (int i = 0; i < 100; i++) {
      bucket.reserve();
    }
    now.addAndGet(1_000_000_000L);
    for (int i = 0; i < 50; i++) {
      assertThat(bucket.reserve()).isZero();
    }
    assertThat(bucket.reserve()).isPositive();
    now.addAndGet(3_600_000_000_000L);
    for (int i = 0; i < 100; i++) {
      assertThat(bucket.reserve()).isZero();
    }
    assertThat(bucket.reserve()).isPositive();
  }

  @Test
  void acquireWaitsOnlyWhenTheBucketIsEmpty() {
    TokenBucket bucket = bucket(10, 2);
    bucket.acquire();
    bucket.acquire();
    assertThat(waits).isEmpty();

    bucket.acquire();
    bucket.acquire();
    assertThat(waits).containsExactly(100_000_000L, 200_000_000L);
  }

  @Test
  void anInterruptedWaitReturnsWithTheInterruptStillSet() {
    TokenBucket bucket =
        new TokenBucket(
            10,
            1,
            now::get,
            nanos -> {
              throw new InterruptedException();
            });
    bucket.acquire();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();

    bucket.acquire();
    assertThat(Thread.currentThread().isInterrupted()).isTrue();
  }

  @Test
  void nonsenseSettingsAreRefused() {
    assertThatThrownBy(() -> new TokenBucket(0, 10)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new TokenBucket(5, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
