package io.kipam.node.kube;

import java.util.function.LongSupplier;

/**
 * A token bucket for the daemon's API writes: {@code burst} writes at once, then {@code qps} per
 * second. Deliberate numbers instead of a client's defaults (5/10 would make 110 pods starting on
 * one node wait some 20 seconds for their addresses), and a cap on what one node can ask of the API
 * server.
 */
public final class WriteRateLimiter {

  private final double qps;
  private final double burst;
  private final LongSupplier nanoTime;
  private double tokens;
  private long last;

  public WriteRateLimiter(double qps, int burst) {
    this(qps, burst, System::nanoTime);
  }

  WriteRateLimiter(double qps, int burst, LongSupplier nanoTime) {
    if (qps <= 0 || burst < 1) {
      throw new IllegalArgumentException("QPS must be positive and burst at least 1");
    }
    this.qps = qps;
    this.burst = burst;
    this.nanoTime = nanoTime;
    this.tokens = burst;
    this.last = nanoTime.getAsLong();
  }

  /** Takes one token and returns how many nanoseconds the caller must wait before writing. */
  synchronized long reserve() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - last) / 1e9 * qps);
    last = now;
    tokens -= 1;
    return tokens >= 0 ? 0 : (long) (-tokens / qps * 1e9);
  }

  /** Waits for a token. */
  public void acquire() {
    long wait = reserve();
    if (wait > 0) {
      try {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
