package io.kipam.operator.cli;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The options of one {@code kubectl kipam} subcommand ({@code pools}, {@code who-has}, {@code
 * release}; {@code check} parses its own), parsed from the arguments after the subcommand. Each
 * subcommand names the options it takes and how many plain arguments; anything else is refused with
 * a message that names it ({@link Invalid}), which the caller prints before exiting 2.
 *
 * @param kubeconfig {@code --kubeconfig PATH}, else {@code KUBECONFIG} when it names one file;
 *     absent: fabric8's own resolution, as kubectl's ({@code ~/.kube/config})
 * @param json {@code -o json} / {@code --output json}
 * @param pools {@code --pool NAME}, repeatable
 * @param report {@code --from-report FILE}
 * @param arguments the plain arguments, in order
 * @param dryRun {@code --dry-run}
 * @param namespace {@code --namespace NS} / {@code -n NS}
 */
public record CliOptions(
    Optional<Path> kubeconfig,
    boolean json,
    Set<String> pools,
    Optional<Path> report,
    List<String> arguments,
    boolean help,
    boolean dryRun,
    Optional<String> namespace) {

  /** An option a subcommand takes besides {@code --kubeconfig} and {@code --help}. */
  public enum Option {
    OUTPUT,
    POOL,
    FROM_REPORT,
    DRY_RUN,
    NAMESPACE
  }

  /** An argument that is not understood; the message names it. */
  public static final class Invalid extends IllegalArgumentException {
    Invalid(String message) {
      super(message);
    }
  }

  /**
   * @param command the subcommand, for messages
   * @param takes the options it takes
   * @param operands the names of its plain arguments, e.g. {@code ["IP"]}; each is required
   */
  public static CliOptions parse(
      String command,
      Set<Option> takes,
      List<String> operands,
      List<String> args,
      Map<String, String> env) {
    Optional<Path> kubeconfig = Optional.empty();
    boolean json = false;
    Set<String> pools = new LinkedHashSet<>();
    Optional<Path> report = Optional.empty();
    List<String> plain = new ArrayList<>();
    boolean help = false;
    boolean dryRun = false;
    Optional<String> namespace = Optional.empty();
    List<String> rest = new ArrayList<>(args);
    while (!rest.isEmpty()) {
      String arg = rest.remove(0);
      String name = arg;
      String inline = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        name = arg.substring(0, eq);
        inline = arg.substring(eq + 1);
      }
      switch (name) {
        case "--help", "-h" -> help = true;
        case "--kubeconfig" -> kubeconfig = Optional.of(Path.of(value(name, inline, rest)));
        case "--output", "-o" -> {
          allowed(command, takes, Option.OUTPUT, arg);
          String value = value(name, inline, rest);
          json =
              switch (value) {
                case "json" -> true;
                case "text" -> false;
                default -> throw new Invalid(name + " must be text or json, not " + value);
              };
        }
        case "--pool" -> {
          allowed(command, takes, Option.POOL, arg);
          pools.add(value(name, inline, rest));
        }
        case "--from-report" -> {
          allowed(command, takes, Option.FROM_REPORT, arg);
          report = Optional.of(Path.of(value(name, inline, rest)));
        }
        case "--dry-run" -> {
          allowed(command, takes, Option.DRY_RUN, arg);
          dryRun = true;
        }
        case "--namespace", "-n" -> {
          allowed(command, takes, Option.NAMESPACE, arg);
          namespace = Optional.of(value(name, inline, rest));
        }
        case "--" -> {
          plain.addAll(rest);
          rest.clear();
        }
        default -> {
          if (arg.startsWith("-") && arg.length() > 1) {
            throw new Invalid("unknown option " + arg + " for " + command + " (see --help)");
          }
          plain.add(arg);
        }
      }
    }
    if (!help) {
      if (plain.size() < operands.size()) {
        throw new Invalid(command + " needs " + operands.get(plain.size()) + " (see --help)");
      }
      if (plain.size() > operands.size()) {
        throw new Invalid(
            "unexpected argument "
                + plain.get(operands.size())
                + " for "
                + command
                + " (see --help)");
      }
      if (takes.contains(Option.FROM_REPORT) && report.isEmpty()) {
        throw new Invalid(command + " needs --from-report FILE (see --help)");
      }
    }
    if (kubeconfig.isEmpty()) {
      String fromEnv = env.get("KUBECONFIG");
      if (fromEnv != null && !fromEnv.isBlank() && !fromEnv.contains(File.pathSeparator)) {
        kubeconfig = Optional.of(Path.of(fromEnv.trim()));
      }
    }
    return new CliOptions(
        kubeconfig, json, Set.copyOf(pools), report, List.copyOf(plain), help, dryRun, namespace);
  }

  private static void allowed(String command, Set<Option> takes, Option option, String arg) {
    if (!takes.contains(option)) {
      throw new Invalid("unknown option " + arg + " for " + command + " (see --help)");
    }
  }

  private static String value(String option, String inline, List<String> rest) {
    String value = inline;
    if (value == null) {
      if (rest.isEmpty() || rest.get(0).startsWith("--")) {
        throw new Invalid(option + " needs a value");
      }
      value = rest.remove(0);
    }
    if (value.isBlank()) {
      throw new Invalid(option + " needs a value, not an empty one");
    }
    return value;
  }
}
