package io.kipam.operator.cli.importer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kipam.operator.cli.importer.ImportPlan.Leaked;
import io.kipam.operator.cli.importer.ImportPlan.PlannedAddress;
import io.kipam.operator.cli.importer.ImportPlan.PlannedPool;
import io.kipam.operator.cli.importer.ImportPlan.PlannedSlot;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** An import's plan (and outcome) as text for people and as JSON for tools. */
public final class PlanText {

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private PlanText() {}

  public static String text(ImportPlan plan) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            "%-28s %-20s %-10s %-6s %-30s %-8s %s%n",
            "POOL", "CIDR", "NETWORK", "BLOCK", "FROM (whereabouts IPPool)", "STATE", "NADS"));
    for (PlannedPool p : plan.pools()) {
      out.append(
          String.format(
              "%-28s %-20s %-10s /%-5d %-30s %-8s %s%n",
              p.name(),
              p.spec().getCidr()
                  + (p.spec().getRangeStart() == null && p.spec().getRangeEnd() == null
                      ? ""
                      : " (range)"),
              p.spec().getNetwork() == null ? "-" : p.spec().getNetwork(),
              p.spec().getBlockSize(),
              p.whereaboutsPool(),
              state(p.present()),
              String.join(",", p.nads())));
    }
    out.append(
        String.format(
            "%n%-40s %-10s %-24s %-9s %s%n", "SLOT", "MODE", "NODE", "ADDRESSES", "STATE"));
    for (PlannedSlot s : plan.slots()) {
      out.append(
          String.format(
              "%-40s %-10s %-24s %-9d %s%n",
              s.name(),
              s.shared() ? "Shared" : "Exclusive",
              s.shared() ? "(sub-claims)" : s.node(),
              s.addresses(),
              state(s.present())));
    }
    out.append(
        String.format(
            "%n%-40s %-28s %-24s %-40s %s%n", "ADDRESS", "POD", "NODE", "BLOCK", "STATE"));
    for (PlannedAddress a : plan.addresses()) {
      out.append(
          String.format(
              "%-40s %-28s %-24s %-40s %s%n",
              a.namespace() + "/" + a.name(),
              a.namespace() + "/" + a.pod(),
              a.node(),
              a.block(),
              state(a.present())));
    }
    if (!plan.leaked().isEmpty()) {
      out.append("\nLEAKED (recorded by whereabouts for pods that are gone; not imported)\n");
      for (Leaked l : plan.leaked()) {
        out.append(
            String.format(
                "  %-16s %-28s %s (%s, container %s)%n",
                l.ip(), l.podRef(), l.why(), l.source(), l.containerId()));
      }
    }
    if (!plan.problems().isEmpty()) {
      out.append("\nNOT IMPORTED (fix and run again)\n");
      plan.problems().forEach(p -> out.append("  ").append(p).append('\n'));
    }
    long shared = plan.slots().stream().filter(PlannedSlot::shared).count();
    out.append(
        String.format(
            "%n%d pools, %d slots (%d Exclusive, %d Shared), %d addresses, %d leaked, %d problems;"
                + " %d objects to create%n",
            plan.pools().size(),
            plan.slots().size(),
            plan.slots().size() - shared,
            shared,
            plan.addresses().size(),
            plan.leaked().size(),
            plan.problems().size(),
            plan.toCreate()));
    return out.toString();
  }

  public static String json(ImportPlan plan, boolean dryRun, ImportWriter.Outcome outcome) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("dryRun", dryRun);
    doc.put("pools", plan.pools());
    doc.put("slots", plan.slots());
    doc.put("addresses", plan.addresses());
    doc.put("leaked", plan.leaked());
    doc.put("problems", plan.problems());
    doc.put("toCreate", plan.toCreate());
    if (outcome != null) {
      doc.put("outcome", outcome);
    }
    try {
      return JSON.writeValueAsString(doc) + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String state(boolean present) {
    return present ? "present" : "create";
  }
}
