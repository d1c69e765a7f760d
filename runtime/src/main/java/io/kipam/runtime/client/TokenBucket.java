package io.kipam.runtime.client;

import java.util.function.LongSupplier;

/**
 * A token bucket, as client-go's QPS/burst limiter: {@code burst} requests at once, then {@code
 * qps} per second. kipam-node paces its API writes with one, kipam-operator every request of its
 * client; fabric8 has no limiter of its own, and client-go's defaults (5/10) are too low for either
 * (110 pods starting on one node, or a restart with thousands of blocks, would wait for minutes),
 * so each sets its numbers deliberately.
 *
 * <p>The caller waits in {@link #acquire}, on its own thread; the bucket's lock is held only to
 * take the token, never while waiting.
 */
public final class TokenBucket {

  /** Waits the given number of nanoseconds. */
  @FunctionalInterface
  interface Sleeper {
    void sleep(long nanos) throws InterruptedException;
  }

  private final double qps;
  private final double burst;
  private final LongSupplier nanoTime;
  private final Sleeper sleeper;
  private double tokens;
  private long last;

  public TokenBucket(double qps, int burst) {
    this(
        qps,
        burst,
        System::nanoTime,
        nanos -> Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000)));
  }

  TokenBucket(double qps, int burst, LongSupplier nanoTime, Sleeper sleeper) {
    if (qps <= 0 || burst < 1) {
      throw new IllegalArgumentException("QPS must be positive and burst at least 1");
    }
    this.qps = qps;
    this.burst = burst;
    this.nanoTime = nanoTime;
    this.sleeper = sleeper;
    this.tokens = burst;
    this.last = nanoTime.getAsLong();
  }

  /** Takes one token and returns how many nanoseconds the caller must wait before sending. */
  synchronized long reserve() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - last) / 1e9 * qps);
    last = now;
    tokens -= 1;
    return tokens >= 0 ? 0 : (long) (-tokens / qps * 1e9);
  }

  /**
   * Waits for a token. An interrupt ends the wait early and stays set on the thread, so the request
   * that follows fails as interrupted rather than this method throwing.
   */
  public void acquire() {
    long wait = reserve();
    if (wait > 0) {
      try {
        sleeper.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
