package io.kipam.operator.cli;

import io.kipam.operator.check.CheckCommand;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * {@code kubectl kipam}: kubectl runs the executable {@code kubectl-kipam} on the PATH with the
 * arguments after {@code kipam}, and it runs this class. Subcommands: {@code check} (exactly {@code
 * kipam-operator check}), {@code pools}, {@code who-has}, {@code release} and {@code import}. Every
 * subcommand exits 0 when there is nothing to act on, 1 when there is, 2 when it could not run,
 * with one line on stderr naming why. See {@code docs/operations.md}.
 */
public final class KubectlKipam {

  public static final String USAGE =
      """
      usage: kubectl kipam COMMAND [OPTIONS]

      commands:
        check                        the audit once, read-only (as kipam-operator check)
        pools [--pool NAME] [-o json]
                                     usage per pool and per node
        who-has IP                   the IPAddress objects holding IP, and who holds them
        release --from-report FILE   remove the orphans a `check -o json` report named that a
                                     fresh read still finds orphaned
        import whereabouts [--dry-run] [--namespace NS] [-o json]
                                     take over whereabouts' live allocations (docs/migration.md)
        help                         this text

      Every command takes --kubeconfig PATH (default: KUBECONFIG, else ~/.kube/config) and --help.
      exit code: 0 nothing to act on, 1 something found (or left), 2 could not run
      """;

  private KubectlKipam() {}

  public static void main(String[] args) {
    System.exit(run(Arrays.asList(args), System.getenv(), System.out, System.err));
  }

  public static int run(
      List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    if (args.isEmpty()) {
      err.print(USAGE);
      return CheckCommand.FAILED;
    }
    List<String> rest = args.subList(1, args.size());
    return switch (args.get(0)) {
      case "check" -> CheckCommand.run(rest, env, out, err);
      case "pools" -> PoolsCommand.run(rest, env, out, err);
      case "who-has" -> WhoHasCommand.run(rest, env, out, err);
      case "release" -> ReleaseCommand.run(rest, env, out, err);
      case "import" -> ImportCommand.run(rest, env, out, err);
      case "help", "--help", "-h" -> {
        out.print(USAGE);
        yield CheckCommand.CLEAN;
      }
      default -> {
        err.println(
            "kubectl kipam: unknown command "
                + args.get(0)
                + " (commands: check, pools, who-has, release, import, help)");
        yield CheckCommand.FAILED;
      }
    };
  }
}
