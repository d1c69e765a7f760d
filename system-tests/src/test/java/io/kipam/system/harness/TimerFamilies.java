package io.kipam.system.harness;

import io.kipam.testing.ProductDefaults;
import io.kipam.testing.Variants;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/**
 * The timer families of the system tests ({@link Variants}; docs/development.md, "Timers"): each a
 * source of a parameterized test,
 * {@code @MethodSource("io.kipam.system.harness.TimerFamilies#settle")}, whose argument is the
 * environment to start kipam-node or kipam-operator with. The shortened variant names its values;
 * the one at the product's defaults unsets them ({@link ProductDefaults}).
 */
public final class TimerFamilies {

  private TimerFamilies() {}

  private static Stream<Named<Map<String, String>>> family(
      String name, String shortened, Map<String, String> values) {
    return ProductDefaults.timerFamily(name, shortened, values);
  }

  /** How long an address whose write had an unknown outcome stays taken: 5 s, and the default. */
  public static Stream<Named<Map<String, String>>> settle() {
    return family("kipam-node settle", "settle 5 s", Map.of("KIPAM_SETTLE_SECONDS", "5"));
  }

  /** CNI GC's grace for young allocations: 2 s, and the default. */
  public static Stream<Named<Map<String, String>>> gcGrace() {
    return family("kipam-node GC grace", "GC grace 2 s", Map.of("KIPAM_GC_GRACE_SECONDS", "2"));
  }

  /** How often a node writes a block's count: 1 s, and the default. */
  public static Stream<Named<Map<String, String>>> blockStatus() {
    return family(
        "kipam-node block status",
        "block status every 1 s",
        Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1"));
  }

  /** kipam-operator's leader election: the harness's 4 s lease, and the default (client-go's). */
  public static Stream<Named<Map<String, String>>> lease() {
    return family(
        "kipam-operator lease",
        "lease 4 s, renew deadline 3 s, retry 1 s",
        Map.of(
            "KIPAM_LEASE_DURATION_SECONDS", "4",
            "KIPAM_LEASE_RENEW_DEADLINE_SECONDS", "3",
            "KIPAM_LEASE_RETRY_PERIOD_SECONDS", "1"));
  }

  /**
   * How often kipam-operator looks again at a decision that waits for IPAddresses to go (a block
   * deleted by hand, a pool deleted with addresses): 1 s, and the default.
   */
  public static Stream<Named<Map<String, String>>> recheck() {
    return family("kipam-operator recheck", "recheck 1 s", Map.of("KIPAM_RECHECK_SECONDS", "1"));
  }

  /**
   * How often kipam-operator brings {@code kipam.io/ip} on Nodes up to date: 2 s, and the default.
   */
  public static Stream<Named<Map<String, String>>> capacity() {
    return family(
        "kipam-operator capacity", "capacity every 2 s", Map.of("KIPAM_CAPACITY_SECONDS", "2"));
  }

  /**
   * How long a node keeps a block closed after its Ready answer when kipam-operator does not come
   * back to the round: 6 s, and the default.
   */
  public static Stream<Named<Map<String, String>>> releaseAbandon() {
    return family(
        "kipam-node release abandon",
        "abandon after 6 s",
        Map.of("KIPAM_RELEASE_ABANDON_SECONDS", "6"));
  }

  /**
   * The timers of the two audits of orphaned IPAddresses, one variant for both: kipam-operator's
   * ({@code operator}: its pause between passes and its orphan grace) and kipam-node's own ({@code
   * daemon}: its orphan grace).
   */
  public record OrphanAudits(Map<String, String> operator, Map<String, String> daemon) {}

  /** Both audits shortened (operator every 2 s, grace 3 s; node grace 3 s), and at the defaults. */
  public static Stream<Named<OrphanAudits>> orphanAudits() {
    Map<String, String> operator =
        Map.of("KIPAM_AUDIT_SECONDS", "2", "KIPAM_ORPHAN_GRACE_SECONDS", "3");
    Map<String, String> daemon = Map.of("KIPAM_ORPHAN_GRACE_SECONDS", "3");
    return Variants.<OrphanAudits>family("orphan audits")
        .shortened(
            "kipam-operator audit every 2 s, grace 3 s; kipam-node grace 3 s",
            new OrphanAudits(operator, daemon))
        .defaults(new OrphanAudits(unset(operator), unset(daemon)))
        .draw();
  }

  private static Map<String, String> unset(Map<String, String> values) {
    return ProductDefaults.of(values.keySet().toArray(String[]::new));
  }

  /**
   * {@code base} with a family's {@code variant} over it; a setting the variant unsets stays mapped
   * to {@code null}, so that the process started with the result reads its default.
   */
  public static Map<String, String> over(Map<String, String> base, Map<String, String> variant) {
    Map<String, String> env = new HashMap<>(base);
    env.putAll(variant);
    return env;
  }
}
