package io.kipam.operator.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.audit.AddressObject;
import io.kipam.operator.audit.ClusterFacts;
import io.kipam.operator.audit.OrphanReason;
import io.kipam.operator.audit.OrphanRemover;
import io.kipam.operator.audit.OrphanRules;
import io.kipam.operator.check.CheckCommand;
import io.kipam.operator.kube.EventRecorder;
import java.io.PrintStream;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code kubectl kipam release --from-report FILE}: removes the orphans a report of {@code check -o
 * json} named, each only if a fresh read still finds the same object (UID) orphaned for the same
 * reason; the read and the removal are the audit's own ({@link OrphanRemover#removeNamed}, every
 * delete with a UID precondition), under {@code check}'s rule that every address's Pod is read.
 * Online, no lock: whatever changed since the report wins. Prints a line per orphan, removed or
 * kept and why.
 *
 * <p>Exit 0 when nothing the report named is left orphaned (each removed, gone, or no orphan any
 * more); 1 when some named orphan is still an orphan but was not removed (orphaned for another
 * reason now, changed under the delete, or named without a UID); 2 when it could not run.
 */
final class ReleaseCommand {

  static final String USAGE =
      """
      usage: kubectl kipam release --from-report FILE [--kubeconfig PATH] [--help]

      Removes the orphans named in FILE, a report of `kubectl kipam check -o json`, that a fresh
      read still finds orphaned for the same reason, each delete preconditioned on the object's
      UID; an address allocated again, or whose pod, block or node came back, is kept. Other
      problems of the report (duplicates, stuck blocks) are left alone.

      exit code: 0 nothing named is left orphaned, 1 some named orphan could not be removed,
      2 a bad argument or report, or the API could not be read
      """;

  private ReleaseCommand() {}

  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    CliOptions options;
    OrphanList report;
    try {
      options =
          CliOptions.parse("release", Set.of(CliOptions.Option.FROM_REPORT), List.of(), args, env);
      if (options.help()) {
        out.print(USAGE);
        return CheckCommand.CLEAN;
      }
      report = OrphanList.read(options.report().orElseThrow());
    } catch (CliOptions.Invalid | OrphanList.Invalid e) {
      err.println("kubectl kipam release: " + e.getMessage());
      return CheckCommand.FAILED;
    }
    out.println(
        "kubectl kipam release: "
            + report.orphans().size()
            + (report.orphans().size() == 1 ? " orphan" : " orphans")
            + " named in "
            + options.report().get()
            + "; each is read again before it is removed"
            + (report.others() == 0
                ? ""
                : " (" + report.others() + " other problems of the report are left alone)"));
    if (report.orphans().isEmpty()) {
      out.println("nothing to release");
      return CheckCommand.CLEAN;
    }
    try (KubernetesClient client = Cluster.connect(options.kubeconfig())) {
      OrphanRemover remover =
          OrphanRemover.oneShot(
              client, new EventRecorder(client, "default", "kubectl-kipam", Clock.systemUTC()));
      int removed = 0;
      int kept = 0;
      int left = 0;
      for (OrphanList.Named orphan : report.orphans()) {
        Line line;
        try {
          line = release(client, remover, orphan);
        } catch (KubernetesClientException e) {
          out.flush();
          err.println(
              "kubectl kipam release: "
                  + CheckCommand.failure(e, "the API server " + client.getMasterUrl())
                  + " (at "
                  + orphan.address()
                  + "; the orphans before it are done)");
          return CheckCommand.FAILED;
        }
        out.println(line.text());
        switch (line.kind()) {
          case REMOVED -> removed++;
          case KEPT -> kept++;
          case LEFT -> left++;
        }
      }
      out.println(
          removed
              + " removed, "
              + kept
              + " kept (no orphans any more), "
              + left
              + " still orphaned but not removed");
      out.flush();
      return left == 0 ? CheckCommand.CLEAN : CheckCommand.PROBLEMS;
    } catch (Cluster.Unreadable e) {
      err.println("kubectl kipam release: " + e.getMessage());
      return CheckCommand.FAILED;
    }
  }

  /** Removed; kept because it is no orphan any more; left: still orphaned, not removed. */
  enum Kind {
    REMOVED,
    KEPT,
    LEFT
  }

  record Line(Kind kind, String text) {}

  static Line release(KubernetesClient client, OrphanRemover remover, OrphanList.Named orphan) {
    String what = orphan.address() + " (" + orphan.ip() + " of pool " + orphan.pool() + ")";
    if (orphan.uid().isEmpty()) {
      return new Line(
          Kind.LEFT,
          "left    "
              + what
              + ": the report names no uid (written by an older check); run check again");
    }
    AddressObject key = new AddressObject(orphan.namespace(), orphan.name(), orphan.uid().get());
    OrphanRemover.Result result =
        remover.removeNamed(key, orphan.reason(), ClusterFacts.uncachedEveryPod(client));
    return switch (result.outcome()) {
      case REMOVED ->
          new Line(
              Kind.REMOVED,
              "removed "
                  + what
                  + ": "
                  + result.verdict().map(OrphanRules.Verdict::detail).orElse(orphan.detail())
                  + (result.gone() ? "" : "; Terminating until its attachment ends"));
      case GONE -> new Line(Kind.KEPT, "gone    " + what + ": deleted already");
      case REPLACED ->
          new Line(
              Kind.KEPT,
              "kept    "
                  + what
                  + ": allocated again since the report (uid "
                  + result.fresh().getMetadata().getUid()
                  + ", the report names "
                  + key.uid()
                  + ")");
      case NOT_ORPHANED ->
          new Line(Kind.KEPT, "kept    " + what + ": " + cameBack(orphan.reason(), result.fresh()));
      case OTHER_REASON ->
          new Line(
              Kind.LEFT,
              "left    "
                  + what
                  + ": still orphaned, but now because "
                  + result.verdict().get().detail()
                  + " (the report says "
                  + orphan.reason().label()
                  + "); run check again");
      case CHANGED ->
          new Line(
              Kind.LEFT,
              "left    " + what + ": it changed while it was being removed; run check again");
    };
  }

  /** What exists again, for an orphan that is none any more. */
  private static String cameBack(OrphanReason reason, IPAddress fresh) {
    if (fresh.getMetadata().getDeletionTimestamp() != null) {
      return "being deleted already; kipam-node on "
          + fresh.getSpec().getNode()
          + " ends its attachment";
    }
    return switch (reason) {
      case POD -> {
        PodReference pod = OrphanRules.podOf(fresh);
        yield pod == null
            ? "no orphan any more: it names no pod now"
            : "its pod is there (again): "
                + fresh.getMetadata().getNamespace()
                + "/"
                + pod.getName()
                + " (uid "
                + pod.getUid()
                + ") exists";
      }
      case BLOCK -> "its IPBlock " + fresh.getSpec().getBlock() + " exists (again)";
      case NODE -> "its Node " + fresh.getSpec().getNode() + " exists (again)";
    };
  }
}
