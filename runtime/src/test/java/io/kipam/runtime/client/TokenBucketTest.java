package io.kipam.runtime.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

  /** The burst at once, then one request each 1/rate: 20 ms at 50/s, 100 ms at 10/s. */
  @ParameterizedTest(name = "{0}/s, burst {1}: then every {2} ns")
  @CsvSource({"50, 100, 20000000", "10, 3, 100000000"})
  void aBurstPassesAtOnceThenRequestsAreSpacedByTheRate(double qps, int burst, long spacing) {
    TokenBucket bucket = bucket(qps, burst);
    for (int i = 0; i < burst; i++) {
      assertThat(bucket.reserve()).isZero();
    }
    assertThat(bucket.reserve()).isEqualTo(spacing);
    assertThat(bucket.reserve()).isEqualTo(2 * spacing);
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
