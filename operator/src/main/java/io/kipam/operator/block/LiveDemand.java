package io.kipam.operator.block;

import io.kipam.api.DemandAnnotation;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * Whether a Node's recorded demand ({@code kipam.io/demand}) still speaks for a running daemon.
 * kipam-node renews the demand's time ({@code at=}) every 30 s while its node stays short, so a
 * demand not renewed for {@link #MAX_AGE} is a daemon that is gone (stopped, crashed, or its node
 * cut off): kipam-operator then ignores it, and converts no slot for it. A Node that is gone takes
 * its demand with it. Two cases still count:
 *
 * <ul>
 *   <li>a time ahead of the operator's clock (clock skew): the daemon is alive;
 *   <li>a demand without a time, written by a kipam-node of an earlier version: as before, it
 *       counts until that daemon, or the one that replaces it, rewrites it.
 * </ul>
 */
final class LiveDemand {

  /** Four missed renewals; also the clock skew between a node and the operator tolerated. */
  static final Duration MAX_AGE = Duration.ofMinutes(2);

  private LiveDemand() {}

  /**
   * Whether the demand a Node with {@code annotations} records is to be acted on at {@code now}.
   */
  static boolean live(Map<String, String> annotations, Instant now) {
    return DemandAnnotation.recordedAt(annotations)
        .map(at -> !now.isAfter(at.plus(MAX_AGE)))
        .orElse(true);
  }
}
