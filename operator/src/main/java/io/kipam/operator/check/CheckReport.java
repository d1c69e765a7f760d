package io.kipam.operator.check;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one {@code kipam-operator check} found: a row per pool and the problems, each of one of four
 * kinds. Plain values, so the report is rendered ({@link ReportWriter}) and tested without a
 * cluster.
 *
 * @param addresses IPAddresses read
 * @param blocks IPBlocks read
 */
public record CheckReport(int addresses, int blocks, List<PoolRow> pools, List<Problem> problems) {

  public CheckReport {
    pools = List.copyOf(pools);
    problems = List.copyOf(problems);
  }

  public boolean clean() {
    return problems.isEmpty();
  }

  /**
   * One pool's counts.
   *
   * @param network {@code spec.network}, {@code ""} for none
   * @param capacity {@code status.capacity}, else computed from the spec; {@code "invalid"} for a
   *     spec that describes no pool
   * @param allocated IPAddresses labelled {@code kipam.io/pool} with the pool's name
   */
  public record PoolRow(
      String name,
      String network,
      String capacity,
      long allocated,
      int orphans,
      int duplicates,
      int stuckBlocks) {}

  /** One problem; {@link #json} is its object in {@code problems} of the JSON report. */
  public sealed interface Problem {
    /** {@code orphan}, {@code duplicate}, {@code stuck-block} or {@code unknown-pool}. */
    String kind();

    Map<String, Object> json();
  }

  /**
   * An IPAddress orphaned now: the operator removes it after the grace period if it stays so.
   *
   * @param address namespace/name
   * @param uid the IPAddress's UID, so that a later removal touches this object only
   * @param reason {@code pod}, {@code block} or {@code node}
   * @param detail the missing object, e.g. "its Node n1 does not exist"
   */
  public record Orphan(
      String pool, String address, String uid, String ip, String reason, String detail)
      implements Problem {
    @Override
    public String kind() {
      return "orphan";
    }

    @Override
    public Map<String, Object> json() {
      return object(
          "kind", kind(), "pool", pool, "address", address, "uid", uid, "ip", ip, "reason", reason,
          "detail", detail);
    }
  }

  /** An IPAddress holding an address of a network: namespace/name, and the pool it names. */
  public record Holder(String address, String pool) {}

  /**
   * One address of one network held by more than one IPAddress.
   *
   * @param network the pools' {@code spec.network}, {@code ""} for none
   */
  public record Duplicate(String network, String ip, List<Holder> holders) implements Problem {
    public Duplicate {
      holders = List.copyOf(holders);
    }

    @Override
    public String kind() {
      return "duplicate";
    }

    @Override
    public Map<String, Object> json() {
      return object(
          "kind",
          kind(),
          "network",
          network,
          "ip",
          ip,
          "holders",
          holders.stream().map(h -> object("address", h.address(), "pool", h.pool())).toList());
    }
  }

  /**
   * An IPBlock that does not move on by itself: its Node is gone, it has been being deleted for
   * long, or a release round has waited long for its answer.
   *
   * @param node {@code spec.node}, {@code ""} for none
   * @param detail every reason, e.g. "its Node n1 does not exist"
   */
  public record StuckBlock(String pool, String block, String node, String detail)
      implements Problem {
    @Override
    public String kind() {
      return "stuck-block";
    }

    @Override
    public Map<String, Object> json() {
      return object("kind", kind(), "pool", pool, "block", block, "node", node, "detail", detail);
    }
  }

  /** An IPAddress whose pool ({@code spec.pool}) does not exist. */
  public record UnknownPool(String pool, String address, String ip) implements Problem {
    @Override
    public String kind() {
      return "unknown-pool";
    }

    @Override
    public Map<String, Object> json() {
      return object("kind", kind(), "pool", pool, "address", address, "ip", ip);
    }
  }

  static Map<String, Object> object(Object... keysAndValues) {
    Map<String, Object> object = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      object.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return object;
  }
}
