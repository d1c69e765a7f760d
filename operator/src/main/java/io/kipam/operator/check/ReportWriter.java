package io.kipam.operator.check;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kipam.operator.check.CheckReport.Problem;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Writes a {@link CheckReport}: as text for a person (a header line, a table with a row per pool,
 * the problems by kind, and "no problems found" or "N problems found" last), or as one JSON object
 * {@code {"pools":[...], "problems":[...], "clean":bool}}.
 */
public final class ReportWriter {

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private ReportWriter() {}

  public static String json(CheckReport report) {
    Map<String, Object> object =
        CheckReport.object(
            "pools",
            report.pools().stream()
                .map(
                    p ->
                        CheckReport.object(
                            "name", p.name(),
                            "network", p.network(),
                            "capacity", p.capacity(),
                            "allocated", p.allocated(),
                            "orphans", p.orphans(),
                            "duplicates", p.duplicates(),
                            "stuckBlocks", p.stuckBlocks()))
                .toList(),
            "problems",
            report.problems().stream().map(Problem::json).toList(),
            "clean",
            report.clean());
    try {
      return JSON.writeValueAsString(object) + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String text(CheckReport report) {
    StringBuilder out = new StringBuilder();
    out.append("kipam-operator check: ")
        .append(count(report.pools().size(), "pool"))
        .append(", ")
        .append(count(report.addresses(), "IPAddress"))
        .append(" and ")
        .append(count(report.blocks(), "IPBlock"))
        .append(" read; nothing was changed\n\n");
    List<List<String>> table = new ArrayList<>();
    table.add(
        List.of(
            "POOL", "NETWORK", "CAPACITY", "ALLOCATED", "ORPHANS", "DUPLICATES", "STUCK BLOCKS"));
    for (CheckReport.PoolRow p : report.pools()) {
      table.add(
          List.of(
              p.name(),
              p.network().isEmpty() ? "-" : p.network(),
              p.capacity(),
              Long.toString(p.allocated()),
              Integer.toString(p.orphans()),
              Integer.toString(p.duplicates()),
              Integer.toString(p.stuckBlocks())));
    }
    table(table, out);
    section(
        report,
        CheckReport.Orphan.class,
        "Orphan candidates (orphaned now; the operator removes each after the grace period if it"
            + " stays so):",
        o -> o.address() + "  " + o.ip() + "  pool " + o.pool() + "  " + o.detail(),
        out);
    section(
        report,
        CheckReport.Duplicate.class,
        "Addresses held more than once (never removed: find which pod really uses it):",
        d ->
            d.ip()
                + (d.network().isEmpty() ? "" : " (network " + d.network() + ")")
                + " is held by "
                + d.holders().stream()
                    .map(h -> h.address() + " (pool " + h.pool() + ")")
                    .collect(Collectors.joining(" and ")),
        out);
    section(
        report,
        CheckReport.StuckBlock.class,
        "Stuck blocks:",
        s -> s.block() + "  pool " + s.pool() + "  " + s.detail(),
        out);
    section(
        report,
        CheckReport.UnknownPool.class,
        "IPAddresses of pools that do not exist:",
        u -> u.address() + "  " + u.ip() + "  pool " + u.pool(),
        out);
    int problems = report.problems().size();
    out.append('\n')
        .append(problems == 0 ? "no problems found" : count(problems, "problem") + " found")
        .append('\n');
    return out.toString();
  }

  private static <P extends Problem> void section(
      CheckReport report,
      Class<P> kind,
      String title,
      java.util.function.Function<P, String> line,
      StringBuilder out) {
    List<P> found = report.problems().stream().filter(kind::isInstance).map(kind::cast).toList();
    if (found.isEmpty()) {
      return;
    }
    out.append('\n').append(title).append('\n');
    found.forEach(p -> out.append("  ").append(line.apply(p)).append('\n'));
  }

  private static void table(List<List<String>> rows, StringBuilder out) {
    int[] widths = new int[rows.get(0).size()];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(String.format("%-" + widths[i] + "s", row.get(i)));
        if (i < row.size() - 1) {
          line.append("  ");
        }
      }
      out.append(line.toString().stripTrailing()).append('\n');
    }
  }

  private static String count(long n, String noun) {
    return n + " " + noun + (n == 1 ? "" : noun.endsWith("s") ? "es" : "s");
  }
}
