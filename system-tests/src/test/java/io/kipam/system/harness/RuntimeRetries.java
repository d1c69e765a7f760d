package io.kipam.system.harness;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A runtime's retries of CNI calls as a test's subject defines them: the caller names the codes a
 * call is tried again on, and every answer is counted by its code, the ones tried again included,
 * so that a test can see (and say) how often kipam answered, say, "no address left" on the way to a
 * success. A retry that hid its code would let a false answer pass as a slow one.
 */
public final class RuntimeRetries {

  /** "Try again later" (11): kipam-node cannot be reached, or is not ready, as while it starts. */
  public static final Set<Integer> TRY_AGAIN_LATER = Set.of(11);

  /**
   * 11 and "no address left" (100), for subjects where a node may rightly find none for a while: a
   * block or address on its way to it from another node.
   */
  public static final Set<Integer> TRY_AGAIN_OR_NONE_YET = Set.of(11, 100);

  /** A runtime's back-off before it tries a sandbox again. */
  static final Duration BACK_OFF = Duration.ofMillis(300);

  private final Duration backOff;

  private static final Pattern CODE = Pattern.compile("\"code\":\\s*(\\d+)");

  private final Map<Integer, AtomicInteger> seen = new ConcurrentHashMap<>();

  /** With a runtime's back-off ({@link #BACK_OFF}). */
  public RuntimeRetries() {
    this(BACK_OFF);
  }

  /** With {@code backOff} between tries: a unit test of the retries themselves needs none. */
  RuntimeRetries(Duration backOff) {
    this.backOff = backOff;
  }

  /**
   * Calls {@code call}, and again after the back-off while its answer's code is one of {@code
   * retried}, for up to {@code within}; returns the last answer. Counts every answer.
   */
  public CniCall.Outcome call(Supplier<CniCall.Outcome> call, Set<Integer> retried, Duration within)
      throws InterruptedException {
    return call(call, outcome -> retried.contains(code(outcome)), within);
  }

  /**
   * As {@link #call(Supplier, Set, Duration)}, tried again while {@code retried} holds for the
   * failed answer (a code and its message); returns the last answer, retried or not.
   */
  public CniCall.Outcome call(
      Supplier<CniCall.Outcome> call,
      java.util.function.Predicate<CniCall.Outcome> retried,
      Duration within)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    CniCall.Outcome outcome = counted(call.get());
    while (!outcome.ok() && retried.test(outcome) && System.nanoTime() < deadline) {
      Thread.sleep(backOff.toMillis());
      outcome = counted(call.get());
    }
    return outcome;
  }

  /** Every answer so far by its code (0 for success), in code order. */
  public Map<Integer, Integer> seen() {
    Map<Integer, Integer> counts = new TreeMap<>();
    seen.forEach((code, n) -> counts.put(code, n.get()));
    return counts;
  }

  /** How many answers had {@code code}. */
  public int seen(int code) {
    AtomicInteger n = seen.get(code);
    return n == null ? 0 : n.get();
  }

  /** The answers of several rigs' {@link NodeRig#retries}, by code, summed. */
  public static Map<Integer, Integer> seenBy(java.util.Collection<NodeRig> rigs) {
    Map<Integer, Integer> counts = new TreeMap<>();
    for (NodeRig rig : rigs) {
      rig.retries().seen().forEach((code, n) -> counts.merge(code, n, Integer::sum));
    }
    return counts;
  }

  private CniCall.Outcome counted(CniCall.Outcome outcome) {
    seen.computeIfAbsent(code(outcome), c -> new AtomicInteger()).incrementAndGet();
    return outcome;
  }

  /** An answer's CNI error code: 0 for success, the error's {@code code}, else its exit status. */
  static int code(CniCall.Outcome outcome) {
    if (outcome.ok()) {
      return 0;
    }
    Matcher m = CODE.matcher(outcome.stdout());
    return m.find() ? Integer.parseInt(m.group(1)) : outcome.exit();
  }
}
