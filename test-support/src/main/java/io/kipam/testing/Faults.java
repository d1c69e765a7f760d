package io.kipam.testing;

import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link FaultProxy} does to the traffic it carries: an immutable setting, swapped whole
 * with {@link FaultProxy#inject(Faults)}, so a test never sees half of an old setting and half of a
 * new one. Faults combine: {@code Faults.delayResponses(d, 0.5).withResetAtRandom(0.1)} delays half
 * of the answers and resets one chunk in ten. Probabilities are between 0 and 1.
 *
 * @param dropAfterRequest per chunk of client data that carries a request (not the TLS handshake):
 *     the chance that it is forwarded and the connection is then cut as the server starts to answer
 * @param delayProbability per server answer (the first server bytes after client data): the chance
 *     that it is held for {@code delay}
 * @param delay how long a delayed answer is held
 * @param resetAtRandom per chunk in either direction: the chance that the connection is reset
 *     instead of the chunk being forwarded
 * @param blackhole new connections are accepted but never connected upstream
 */
public record Faults(
    double dropAfterRequest,
    double delayProbability,
    Duration delay,
    double resetAtRandom,
    boolean blackhole) {

  private static final Faults NONE = new Faults(0, 0, Duration.ZERO, 0, false);

  public Faults {
    requireProbability("dropAfterRequest", dropAfterRequest);
    requireProbability("delayProbability", delayProbability);
    requireProbability("resetAtRandom", resetAtRandom);
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative: " + delay);
    }
  }

  /** Pass-through: every byte forwarded as it comes. */
  public static Faults none() {
    return NONE;
  }

  public static Faults dropAfterRequest(double probability) {
    return NONE.withDropAfterRequest(probability);
  }

  public static Faults delayResponses(Duration delay, double probability) {
    return NONE.withDelayedResponses(delay, probability);
  }

  public static Faults resetAtRandom(double probability) {
    return NONE.withResetAtRandom(probability);
  }

  public static Faults blackholed() {
    return new Faults(0, 0, Duration.ZERO, 0, true);
  }

  public Faults withDropAfterRequest(double probability) {
    return new Faults(probability, delayProbability, delay, resetAtRandom, blackhole);
  }

  public Faults withDelayedResponses(Duration delay, double probability) {
    return new Faults(dropAfterRequest, probability, delay, resetAtRandom, blackhole);
  }

  public Faults withResetAtRandom(double probability) {
    return new Faults(dropAfterRequest, delayProbability, delay, probability, blackhole);
  }

  private static void requireProbability(String name, double p) {
    if (!(p >= 0 && p <= 1)) {
      throw new IllegalArgumentException(name + " must be a probability in [0, 1]: " + p);
    }
  }
}
