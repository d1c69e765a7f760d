package io.kipam.operator.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.operator.check.CheckCommand;
import io.kipam.operator.cli.importer.ImportPlan;
import io.kipam.operator.cli.importer.ImportPlanner;
import io.kipam.operator.cli.importer.ImportWriter;
import io.kipam.operator.cli.importer.PlanText;
import io.kipam.operator.cli.importer.WhereaboutsReader;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code kubectl kipam import whereabouts}: reads whereabouts' records and the
 * NetworkAttachmentDefinitions that use it ({@link WhereaboutsReader}), plans kipam pools, slots
 * and addresses for the live allocations ({@link ImportPlanner}), prints the plan, and unless
 * {@code --dry-run} writes it ({@link ImportWriter}: creates only, idempotent). Exit 0 when all was
 * imported (leaked allocations are reported, not a failure), 1 when something was not, 2 when it
 * could not run. See {@code docs/migration.md}.
 */
final class ImportCommand {

  static final String USAGE =
      """
      usage: kubectl kipam import whereabouts [--dry-run] [--namespace NS] [-o text|json]
                                              [--kubeconfig PATH] [--help]

      Takes over whereabouts' live allocations without renumbering a pod: one kipam IPPool per
      whereabouts range (same CIDR, range, excludes, gateway; network_name as the pool's
      network), an IPAddress owned by each live pod for each of its allocations, in slots
      Exclusive to a node or Shared when their addresses are on several nodes. Allocations of
      pods that are gone are listed as leaked, not imported. Creates only, never deletes: run it
      again at any time. See docs/migration.md.

        --dry-run           print the plan, write nothing
        -n, --namespace NS  whereabouts' namespace (default kube-system)
        -o, --output FMT    text (default) or json

      exit code: 0 imported (or nothing to import), 1 something was not imported (listed),
                 2 a bad argument or the API could not be read
      """;

  private ImportCommand() {}

  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    CliOptions options;
    try {
      options =
          CliOptions.parse(
              "import",
              Set.of(
                  CliOptions.Option.OUTPUT, CliOptions.Option.DRY_RUN, CliOptions.Option.NAMESPACE),
              List.of("SOURCE"),
              args,
              env);
    } catch (CliOptions.Invalid e) {
      err.println("kubectl kipam import: " + e.getMessage());
      return CheckCommand.FAILED;
    }
    if (options.help()) {
      out.print(USAGE);
      return CheckCommand.CLEAN;
    }
    if (!options.arguments().get(0).equals("whereabouts")) {
      err.println(
          "kubectl kipam import: cannot import from "
              + options.arguments().get(0)
              + " (sources: whereabouts)");
      return CheckCommand.FAILED;
    }
    try (KubernetesClient client = Cluster.connect(options.kubeconfig())) {
      ImportPlan plan;
      try {
        plan =
            ImportPlanner.plan(
                WhereaboutsReader.read(client, options.namespace().orElse("kube-system")));
      } catch (KubernetesClientException e) {
        err.println(
            "kubectl kipam import: "
                + CheckCommand.failure(e, "the API server " + client.getMasterUrl()));
        return CheckCommand.FAILED;
      }
      ImportWriter.Outcome outcome = null;
      if (!options.dryRun()) {
        try {
          outcome = new ImportWriter(client).write(plan);
        } catch (KubernetesClientException e) {
          err.println(
              "kubectl kipam import: stopped, run it again to resume: "
                  + CheckCommand.failure(e, "the API server " + client.getMasterUrl()));
          return CheckCommand.FAILED;
        }
      }
      if (options.json()) {
        out.print(PlanText.json(plan, options.dryRun(), outcome));
      } else {
        out.print(PlanText.text(plan));
        if (outcome == null) {
          out.println("dry run: nothing was written");
        } else {
          out.printf(
              "written: %d created, %d already there, %d conflicts%n",
              outcome.created(), outcome.present(), outcome.conflicts().size());
          outcome.conflicts().forEach(c -> out.println("  conflict: " + c));
        }
      }
      out.flush();
      boolean incomplete =
          !plan.problems().isEmpty() || (outcome != null && !outcome.conflicts().isEmpty());
      return incomplete ? CheckCommand.PROBLEMS : CheckCommand.CLEAN;
    } catch (Cluster.Unreadable e) {
      err.println("kubectl kipam import: " + e.getMessage());
      return CheckCommand.FAILED;
    }
  }
}
