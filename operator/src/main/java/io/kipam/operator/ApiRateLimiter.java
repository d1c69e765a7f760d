package io.kipam.operator;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.net.URI;
import java.util.function.LongSupplier;

/**
 * A token bucket in front of every API request of the operator's client (reconciles, JOSDK's own
 * writes, informers' lists), as client-go's QPS/burst limiter: {@code burst} requests at once, then
 * {@code qps} per second. fabric8 has no such limiter of its own, so without one the operator's
 * rate would be bounded by nothing; with client-go's defaults (5/10) a restart with thousands of
 * blocks would take minutes. Not counted: watches, which are long-lived and reconnect with their
 * own back-off, and the leader election's Lease requests, which must never queue behind reconciles
 * (a renewal late by the renew deadline costs the Lease).
 *
 * <p>The wait happens in {@link #before}, on the thread that makes the request (a reconcile or an
 * informer thread), never on the HTTP client's I/O threads.
 */
public final class ApiRateLimiter implements Interceptor {

  public static final String NAME = "kipam-rate-limit";

  private final double qps;
  private final double burst;
  private final LongSupplier nanoTime;
  private double tokens;
  private long last;

  public ApiRateLimiter(double qps, int burst) {
    this(qps, burst, System::nanoTime);
  }

  ApiRateLimiter(double qps, int burst, LongSupplier nanoTime) {
    if (qps <= 0 || burst < 1) {
      throw new IllegalArgumentException("QPS must be positive and burst at least 1");
    }
    this.qps = qps;
    this.burst = burst;
    this.nanoTime = nanoTime;
    this.tokens = burst;
    this.last = nanoTime.getAsLong();
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    if (limited(request.uri())) {
      acquire();
    }
  }

  static boolean limited(URI uri) {
    String query = uri.getRawQuery();
    boolean watch = query != null && query.matches("(^|.*&)watch=(true|1)(&.*|$)");
    boolean lease = uri.getRawPath().startsWith("/apis/coordination.k8s.io/");
    return !watch && !lease;
  }

  /** Takes one token and returns how many nanoseconds the caller must wait before sending. */
  synchronized long reserve() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - last) / 1e9 * qps);
    last = now;
    tokens -= 1;
    return tokens >= 0 ? 0 : (long) (-tokens / qps * 1e9);
  }

  void acquire() {
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
