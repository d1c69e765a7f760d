package io.kipam.operator;

import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.kipam.runtime.client.TokenBucket;
import java.net.URI;

/**
 * A {@link TokenBucket} in front of every API request of the operator's client (reconciles, JOSDK's
 * own writes, informers' lists). fabric8 has no such limiter of its own, so without one the
 * operator's rate would be bounded by nothing; with client-go's defaults (5/10) a restart with
 * thousands of blocks would take minutes. Not counted: watches, which are long-lived and reconnect
 * with their own back-off, and the leader election's Lease requests, which must never queue behind
 * reconciles (a renewal late by the renew deadline costs the Lease).
 *
 * <p>The wait happens in {@link #before}, on the thread that makes the request (a reconcile or an
 * informer thread), never on the HTTP client's I/O threads.
 */
public final class ApiRateLimiter implements Interceptor {

  public static final String NAME = "kipam-rate-limit";

  private final TokenBucket bucket;

  public ApiRateLimiter(double qps, int burst) {
    this.bucket = new TokenBucket(qps, burst);
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    if (limited(request.uri())) {
      bucket.acquire();
    }
  }

  static boolean limited(URI uri) {
    String query = uri.getRawQuery();
    boolean watch = query != null && query.matches("(^|.*&)watch=(true|1)(&.*|$)");
    boolean lease = uri.getRawPath().startsWith("/apis/coordination.k8s.io/");
    return !watch && !lease;
  }
}
