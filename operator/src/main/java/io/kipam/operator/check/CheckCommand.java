package io.kipam.operator.check;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.operator.ApiClients;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * {@code kipam-operator check}: the audit once, read-only, from a kubeconfig; a report on stdout
 * and an exit code: {@value #CLEAN} no problems found, {@value #PROBLEMS} problems found, {@value
 * #FAILED} the check could not run (a bad argument, an unreadable kubeconfig, an API server that
 * cannot be reached or refuses a read), with one line on stderr that names what failed. See {@code
 * docs/audit.md}.
 */
public final class CheckCommand {

  public static final int CLEAN = 0;
  public static final int PROBLEMS = 1;
  public static final int FAILED = 2;

  /** The audit's default page size; the client's limits are the operator's defaults. */
  private static final int PAGE_SIZE = 500;

  private CheckCommand() {}

  /**
   * Runs the check.
   *
   * @param args the arguments after {@code check}
   */
  public static int run(
      List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    CheckOptions options;
    try {
      options = CheckOptions.parse(args, env);
    } catch (CheckOptions.Invalid e) {
      err.println("kipam-operator check: " + e.getMessage());
      return FAILED;
    }
    if (options.help()) {
      out.print(CheckOptions.USAGE);
      return CLEAN;
    }
    KubernetesClient client;
    try {
      client = ApiClients.create(options.kubeconfig(), 50, 100, Duration.ofSeconds(15));
    } catch (IOException | RuntimeException e) {
      err.println(
          "kipam-operator check: cannot read the kubeconfig "
              + options.kubeconfig().map(Object::toString).orElse("(default)")
              + ": "
              + oneLine(e.toString()));
      return FAILED;
    }
    CheckReport report;
    try (client) {
      report = new ClusterCheck(client, Clock.systemUTC(), PAGE_SIZE).run(options.pools());
    } catch (KubernetesClientException e) {
      err.println("kipam-operator check: " + failure(e, "the API server " + client.getMasterUrl()));
      return FAILED;
    } catch (IllegalArgumentException e) {
      err.println("kipam-operator check: " + oneLine(e.getMessage()));
      return FAILED;
    }
    out.print(
        options.output() == CheckOptions.Output.JSON
            ? ReportWriter.json(report)
            : ReportWriter.text(report));
    out.flush();
    return report.clean() ? CLEAN : PROBLEMS;
  }

  /**
   * "cannot reach the API server …: …" or "the API server … refused to read ipaddresses.kipam.io:
   * 403 …", one line.
   */
  public static String failure(KubernetesClientException e, String server) {
    String what = object(e);
    if (e.getCode() <= 0) {
      Throwable cause = e;
      while (cause.getCause() != null) {
        cause = cause.getCause();
      }
      return "cannot reach "
          + server
          + (what.isEmpty() ? "" : " to read " + what)
          + ": "
          + oneLine(cause.toString());
    }
    String reason =
        e.getStatus() != null && e.getStatus().getMessage() != null
            ? e.getStatus().getMessage()
            : e.getMessage();
    return server
        + " refused"
        + (what.isEmpty() ? "" : " to read " + what)
        + ": "
        + e.getCode()
        + " "
        + oneLine(reason);
  }

  /** What the failed request was about, e.g. "ipaddresses.kipam.io" or "pods ns/name". */
  private static String object(KubernetesClientException e) {
    String resource = e.getFullResourceName();
    if (resource == null || resource.isEmpty()) {
      return "";
    }
    if (e.getName() == null) {
      return resource;
    }
    return resource + " " + (e.getNamespace() == null ? "" : e.getNamespace() + "/") + e.getName();
  }

  public static String oneLine(String text) {
    return text == null ? "" : text.replaceAll("\\s*\\R\\s*", " ").trim();
  }
}
