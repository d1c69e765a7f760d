package io.kipam.operator.check;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The options of {@code kipam-operator check}, parsed from the arguments after {@code check}. A bad
 * argument is refused with a message that names it ({@link Invalid}); the caller prints it and
 * exits 2.
 *
 * @param kubeconfig {@code --kubeconfig PATH}, else {@code KUBECONFIG}; absent: fabric8's own
 *     resolution (in-cluster service account, {@code ~/.kube/config})
 * @param output {@code --output text|json} (text)
 * @param pools {@code --pool NAME}, repeatable: report these pools only; empty: every pool
 * @param help {@code --help} (or {@code -h})
 */
public record CheckOptions(
    Optional<Path> kubeconfig, Output output, Set<String> pools, boolean help) {

  /** How the report is written. */
  public enum Output {
    TEXT,
    JSON
  }

  public static final String USAGE =
      """
      usage: kipam-operator check [--kubeconfig PATH] [--output text|json] [--pool NAME]... [--help]

      Reads every IPPool, IPBlock and IPAddress (read-only: writes nothing) and reports per pool
      its capacity, allocated addresses, orphan candidates, duplicates and stuck blocks.

        --kubeconfig PATH   the API server and credentials (default: KUBECONFIG, else in-cluster)
        --output text|json  a report to read (default) or one JSON object
        --pool NAME         report only this pool; repeat for more (default: every pool)
        --help              this text

      exit code: 0 no problems found, 1 problems found, 2 the check could not run
      """;

  /** An argument that is not understood; the message names it. */
  public static final class Invalid extends IllegalArgumentException {
    Invalid(String message) {
      super(message);
    }
  }

  /**
   * @param args the arguments after {@code check}
   * @param env the environment, for {@code KUBECONFIG}
   */
  public static CheckOptions parse(List<String> args, Map<String, String> env) {
    Optional<Path> kubeconfig = Optional.empty();
    Output output = Output.TEXT;
    Set<String> pools = new LinkedHashSet<>();
    boolean help = false;
    List<String> rest = new ArrayList<>(args);
    while (!rest.isEmpty()) {
      String arg = rest.remove(0);
      String name = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        name = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      switch (name) {
        case "--help", "-h" -> help = true;
        case "--kubeconfig" -> kubeconfig = Optional.of(Path.of(value(name, value, rest)));
        case "--output", "-o" -> output = output(value(name, value, rest));
        case "--pool" -> pools.add(value(name, value, rest));
        default ->
            throw new Invalid(
                arg.startsWith("-")
                    ? "unknown option " + arg + " (see --help)"
                    : "unexpected argument " + arg + " (see --help)");
      }
    }
    if (kubeconfig.isEmpty()) {
      String fromEnv = env.get("KUBECONFIG");
      if (fromEnv != null && !fromEnv.isBlank() && !fromEnv.contains(java.io.File.pathSeparator)) {
        kubeconfig = Optional.of(Path.of(fromEnv.trim()));
      }
    }
    return new CheckOptions(kubeconfig, output, Set.copyOf(pools), help);
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

  private static Output output(String value) {
    return switch (value) {
      case "text" -> Output.TEXT;
      case "json" -> Output.JSON;
      default -> throw new Invalid("--output must be text or json, not " + value);
    };
  }
}
