package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.RealNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every command the README and {@code docs/} show ({@link DocumentedCommand}) is covered by a rule
 * of {@link #RULES}; a command no rule matches fails the test, naming its file, line and text, so a
 * new documented command needs a rule. A rule either runs the command here as written ({@code bash
 * -c}, in the repository root, {@code KUBECONFIG} the real node's administrator, {@code kubectl} of
 * its control plane first on {@code PATH}, {@code CONTAINERD_ADDRESS} its containerd) and expects
 * exit 0 and, where the page shows output, the same table columns; or checks that the test or
 * script that runs it elsewhere runs exactly that command; or checks a Maven command against the
 * build without running it ({@link MavenCommandCheck}); or names why the command cannot run on a
 * test machine and what runs the same thing.
 *
 * <p>What the pages assume before their commands, set up here: kipam installed from {@code
 * config/default} on a real node whose CNI is Multus (with a second interface {@code eth1} for the
 * sample Multus network), the sample pool {@code pods-v4} ({@code config/samples/ippool-ipv4.yaml})
 * applied and Ready, the namespaces the pages name ({@code shop}, {@code my-team}), and a
 * Deployment {@code web} of two pods in {@code shop}, so addresses exist.
 */
class DocumentedCommandsE2E {

  private static final String POOL = KipamOnRealNode.samplePoolName();
  private static final List<String> NAMESPACES = List.of("shop", "my-team");

  /** The image the pages' {@code kubectl run} names. */
  private static final String DOCUMENTED_IMAGE = "registry.k8s.io/pause:3.10";

  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);
  private static final Pattern HEADER = Pattern.compile("[A-Z][A-Z0-9]*(\\s+[A-Z][A-Z0-9]*)*");

  private static final Path ROOT = ControlPlaneBinaries.repositoryRoot();

  /** What the command run last printed (its first lines), shown under its summary line. */
  private static final StringBuilder printed = new StringBuilder();

  private static RealNode node;
  private static KipamOnRealNode kipam;
  private static KubernetesClient client;

  private enum Kind {
    RAN,
    RUN_ELSEWHERE,
    CHECKED,
    NOT_RUN
  }

  /**
   * A rule: which commands it covers (the whole command matches {@code command}), how, where when
   * not here, and what it does; {@code apply} returns the problems found (none: the command holds).
   */
  private record Rule(
      Kind kind, Pattern command, String place, Function<DocumentedCommand, List<String>> apply) {

    static Rule of(
        Kind kind, String regex, String place, Function<DocumentedCommand, List<String>> apply) {
      return new Rule(kind, Pattern.compile(regex), place, apply);
    }

    String label() {
      return switch (kind) {
        case RAN -> "ran";
        case RUN_ELSEWHERE -> "run by " + place;
        case CHECKED -> "checked";
        case NOT_RUN -> "not run (" + place + ")";
      };
    }
  }

  private static final List<Rule> RULES =
      List.of(
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("./kipam-demo"),
              "system-tests/src/test/java/io/kipam/system/demo/QuickstartE2E.java",
              c ->
                  merge(
                      problems(
                          firstShellLine("README.md").equals("./kipam-demo"),
                          "QuickstartE2E runs the first line of README.md's first sh block, which"
                              + " is not ./kipam-demo"),
                      contains(
                          "system-tests/src/test/java/io/kipam/system/demo/QuickstartE2E.java",
                          "firstCommand(Files.readString(root.resolve(\"README.md\")))",
                          "assertThat(command).isEqualTo(\"./kipam-demo\")"))),
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("./mvnw -B verify"),
              ".ci/run",
              c ->
                  problems(
                      read(".ci/run").lines().anyMatch(l -> l.strip().equals(c.command())),
                      ".ci/run has no line " + c.command())),
          // Here it would replace the overlay the real node needs (KipamOnRealNode).
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("kubectl apply -k config/default"),
              "api/src/test/java/io/kipam/api/install/InstallManifestsIT.java",
              c ->
                  merge(
                      contains(
                          "api/src/test/java/io/kipam/api/install/KipamInstall.java",
                          "resolve(\"config/default\")",
                          "\"apply\", \"-k\", entryPoint()"),
                      contains(
                          "api/src/test/java/io/kipam/api/install/InstallManifestsIT.java",
                          "KipamInstall.apply(controlPlane)"))),
          // The plugin's examples name the pools and addresses of the test that printed them.
          Rule.of(
              Kind.RUN_ELSEWHERE,
              "kubectl kipam (pools|who-has|check|release) .*",
              "operator/src/test/java/io/kipam/operator/cli/KubectlKipam*IT.java",
              c -> {
                String command = c.command().split(" ")[2];
                String test =
                    switch (command) {
                      case "pools" -> "KubectlKipamPoolsIT";
                      case "who-has" -> "KubectlKipamWhoHasIT";
                      case "check" -> "KubectlKipamCheckIT";
                      default -> "KubectlKipamReleaseIT";
                    };
                return contains(
                    "operator/src/test/java/io/kipam/operator/cli/" + test + ".java",
                    "plugin.kipam(\"" + command + "\"");
              }),
          // Here kipam is installed already, from config/default; a real node of its own installs
          // the chart (with values for that node's paths and API server).
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("helm install kipam charts/kipam"),
              "e2e/src/test/java/io/kipam/e2e/HelmOnRealNodeE2E.java",
              c ->
                  contains(
                      "e2e/src/test/java/io/kipam/e2e/HelmOnRealNodeE2E.java",
                      "\"install\", \"kipam\", Helm.chart().toString()")),
          // The chart's upgrade, after its CRDs are applied: the same real node of its own.
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("helm upgrade kipam charts/kipam"),
              "e2e/src/test/java/io/kipam/e2e/HelmOnRealNodeE2E.java",
              c ->
                  contains(
                      "e2e/src/test/java/io/kipam/e2e/HelmOnRealNodeE2E.java",
                      "\"upgrade\",",
                      "Helm.chart().toString()")),
          // Here it would move the real node's kipam into another namespace; a control plane of
          // its own installs it.
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("kubectl apply -k config/samples/other-namespace"),
              "api/src/test/java/io/kipam/api/install/OtherNamespaceInstallIT.java",
              c ->
                  contains(
                      "api/src/test/java/io/kipam/api/install/OtherNamespaceInstallIT.java",
                      "resolve(\"config/samples/other-namespace\")",
                      "controlPlane.kubectl(\"apply\", \"-k\", overlay)")),
          // The quickstart's output: its namespace has a random name.
          Rule.of(
              Kind.RUN_ELSEWHERE,
              "kubectl get pods -n demo-\\w+ -o wide",
              "e2e/src/test/java/io/kipam/e2e/RealNodeQuickstart.java",
              c ->
                  merge(
                      contains(
                          "e2e/src/test/java/io/kipam/e2e/RealNodeQuickstart.java",
                          "show(\"get\", \"pods\", \"-n\", namespace, \"-o\", \"wide\")"),
                      runHere(c, c.command().replaceFirst("demo-\\w+", "shop")))),
          // The quickstart's Multus step: its pod exists only while the quickstart runs (the
          // user guide's own storage-client commands run here).
          Rule.of(
              Kind.RUN_ELSEWHERE,
              Pattern.quote("kubectl get ipaddresses.kipam.io -n default -o wide"),
              "e2e/src/test/java/io/kipam/e2e/RealNodeQuickstart.java",
              c ->
                  contains(
                      "e2e/src/test/java/io/kipam/e2e/RealNodeQuickstart.java",
                      "show(\"get\", \"ipaddresses.kipam.io\", \"-n\", \"default\", \"-o\","
                          + " \"wide\")")),
          // Writes the reader's ~/.local/bin; the plugin's tests link the launcher into a
          // temporary directory on kubectl's PATH (Plugin), and runHere puts its directory there.
          Rule.of(
              Kind.NOT_RUN,
              "ln -s \"\\$PWD/operator/src/main/dist/kubectl-kipam\" .*",
              "writes the reader's ~/.local/bin; the plugin's tests link the launcher into a"
                  + " temporary directory",
              c ->
                  merge(
                      problems(
                          Files.isRegularFile(ROOT.resolve("operator/src/main/dist/kubectl-kipam")),
                          "operator/src/main/dist/kubectl-kipam does not exist"),
                      contains(
                          "operator/src/test/java/io/kipam/operator/cli/Plugin.java",
                          "Files.createSymbolicLink(",
                          "src/main/dist/kubectl-kipam"))),
          // Installs into the host's /opt/cni/bin; InstallKipamTest runs the script with the same
          // arguments but a temporary directory (Installer, CniPluginBuild).
          Rule.of(
              Kind.NOT_RUN,
              "cni-plugin/src/main/dist/install-kipam\\.sh .*",
              "writes the host's /opt/cni/bin; InstallKipamTest runs it into a temporary directory",
              c ->
                  merge(
                      problems(
                          Files.isRegularFile(ROOT.resolve(c.command().split(" ")[0])),
                          c.command().split(" ")[0] + " does not exist"),
                      contains(
                          "system-tests/src/test/java/io/kipam/system/harness/CniPluginBuild.java",
                          "resolve(\"src/main/dist/install-kipam.sh\")"))),
          // Benchmarks two commits in turn for half an hour or more; it runs KipamRoundsBenchmark,
          // whose Maven command the benchmark pages show and MavenCommandCheck checks.
          Rule.of(
              Kind.NOT_RUN,
              "hack/bench/before-after\\.sh .*",
              "runs a benchmark on two commits in turn for half an hour or more",
              c ->
                  merge(
                      problems(
                          Files.isRegularFile(ROOT.resolve("hack/bench/before-after.sh")),
                          "hack/bench/before-after.sh does not exist"),
                      contains("hack/bench/before-after.sh", "-Dit.test=KipamRoundsBenchmark"))),
          Rule.of(Kind.RAN, "kubectl .*", null, c -> runHere(c, c.command())),
          Rule.of(Kind.RAN, "ctr -n k8s\\.io images import .*", null, c -> runHere(c, c.command())),
          Rule.of(Kind.RAN, "grep .*", null, c -> runHere(c, c.command())),
          Rule.of(
              Kind.CHECKED,
              "\\./mvnw .*",
              null,
              c -> new MavenCommandCheck(ROOT).problems(c.command())));

  @BeforeAll
  static void setUpWhatTheDocsAssume() {
    node = RealNode.start();
    client = node.client();
    // Multus as the node's CNI, eth1 for the sample Multus network's macvlan, and the image the
    // pages' pods name (the node's pause program under that name: no registry is reachable).
    node.installMultus("kipam-docs");
    node.addHostInterface("eth1");
    node.tagImage("kipam.io/workload:1", DOCUMENTED_IMAGE);
    kipam = KipamOnRealNode.install(node, "kipam-docs", List.of(POOL));
    kipam.awaitReady();
    kipam.applySamplePool(Duration.ofMinutes(2));
    await().atMost(Duration.ofMinutes(2)).until(() -> kipam.nodeCapacity() > 0);
    for (String ns : NAMESPACES) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    client
        .apps()
        .deployments()
        .inNamespace("shop")
        .resource(RealNodeKipamE2E.workload("shop", "web", 2))
        .create();
    await()
        .atMost(Duration.ofMinutes(3))
        .untilAsserted(
            () ->
                assertThat(client.pods().inNamespace("shop").list().getItems())
                    .hasSize(2)
                    .allMatch(p -> "Running".equals(p.getStatus().getPhase())));
  }

  @AfterAll
  static void stopNode() {
    if (kipam != null) {
      // The pods go first, while kipam-node still answers their CNI DEL.
      try {
        client.apps().deployments().inNamespace("shop").delete();
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> client.pods().inNamespace("shop").list().getItems().isEmpty());
      } catch (RuntimeException e) {
        System.out.printf("the pods of shop did not all go before teardown: %s%n", e);
      }
    }
    KipamOnRealNode.closeAfter(node, kipam);
  }

  @Test
  void everyDocumentedCommandIsRunOrCheckedByARule() {
    List<DocumentedCommand> commands = DocumentedCommand.collect(ROOT);
    assertThat(commands).as("commands in README.md and docs/").isNotEmpty();
    Map<String, Integer> totals = new LinkedHashMap<>();
    List<String> failures = new ArrayList<>();
    for (String untagged : DocumentedCommand.commandsOutsideShellBlocks(ROOT)) {
      failures.add(
          untagged + ": a command in a fenced block not tagged sh (tag it, or show it as $ )");
    }
    for (DocumentedCommand command : commands) {
      Rule rule =
          RULES.stream()
              .filter(r -> r.command().matcher(command.command()).matches())
              .findFirst()
              .orElse(null);
      if (rule == null) {
        failures.add(command.where() + "  " + command.command() + ": no rule covers this command");
        System.out.printf("NO RULE  %s  %s%n", command.where(), command.command());
        continue;
      }
      printed.setLength(0);
      List<String> problems = rule.apply().apply(command);
      String label = rule.label();
      System.out.printf(
          "%s  %s  %s%s%n",
          label, command.where(), command.command(), problems.isEmpty() ? "" : "  FAILED");
      System.out.print(printed);
      problems.forEach(p -> failures.add(command.where() + "  " + command.command() + ": " + p));
      totals.merge(rule.kind().name(), 1, Integer::sum);
    }
    System.out.printf(
        "%d documented commands: %d ran, %d run elsewhere, %d checked, %d not run, %d without a"
            + " rule; %d failures%n",
        commands.size(),
        totals.getOrDefault("RAN", 0),
        totals.getOrDefault("RUN_ELSEWHERE", 0),
        totals.getOrDefault("CHECKED", 0),
        totals.getOrDefault("NOT_RUN", 0),
        commands.size() - totals.values().stream().mapToInt(Integer::intValue).sum(),
        failures.size());
    assertThat(failures).as("documented commands that do not hold").isEmpty();
  }

  /** Runs {@code command} as a reader would; checks exit 0 and the columns the page shows. */
  private static List<String> runHere(DocumentedCommand documented, String command) {
    List<String> problems = new ArrayList<>();
    try {
      // Both streams go to files, so a command that hangs is stopped at the timeout.
      Path stdout = Files.createTempFile("kipam-docs-", ".out");
      Path stderr = Files.createTempFile("kipam-docs-", ".err");
      ProcessBuilder builder =
          new ProcessBuilder("bash", "-c", command)
              .directory(ROOT.toFile())
              .redirectOutput(stdout.toFile())
              .redirectError(stderr.toFile());
      Map<String, String> env = builder.environment();
      env.put("KUBECONFIG", node.kubeconfig().toString());
      // kubectl of the node's control plane, and the kubectl kipam plugin of the build.
      env.put(
          "PATH",
          node.controlPlane().binary("kubectl").getParent()
              + ":"
              + ROOT.resolve("operator/src/main/dist")
              + ":"
              + System.getenv("PATH"));
      env.put("CONTAINERD_ADDRESS", node.containerdSocket().toString());
      Process process = builder.start();
      process.getOutputStream().close();
      if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        problems.add("still running after " + COMMAND_TIMEOUT);
      } else if (process.exitValue() != 0) {
        problems.add(
            "exit " + process.exitValue() + "; stderr: " + Files.readString(stderr).strip());
      }
      String out = Files.readString(stdout);
      Files.delete(stdout);
      Files.delete(stderr);
      out.lines().limit(12).forEach(l -> printed.append("    | ").append(l).append('\n'));
      String shown = header(documented.shownOutput());
      if (shown != null && !shown.equals(header(out.lines().toList()))) {
        problems.add(
            "the page shows the columns ["
                + shown
                + "], the command prints ["
                + header(out.lines().toList())
                + "]");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command, e);
    }
    return problems;
  }

  /** The column names of the first table header among {@code lines} (upper-case words), or null. */
  private static String header(List<String> lines) {
    return lines.stream()
        .map(String::strip)
        .filter(l -> HEADER.matcher(l).matches())
        .map(l -> String.join(" ", l.split("\\s+")))
        .findFirst()
        .orElse(null);
  }

  private static String firstShellLine(String file) {
    Matcher m = Pattern.compile("```sh\\n([^\\n]+)\\n").matcher(read(file));
    return m.find() ? m.group(1).strip() : "";
  }

  private static List<String> contains(String file, String... texts) {
    String content = read(file);
    List<String> problems = new ArrayList<>();
    for (String text : texts) {
      if (!content.contains(text)) {
        problems.add(file + " does not contain " + text);
      }
    }
    return problems;
  }

  private static List<String> problems(boolean holds, String problem) {
    return holds ? List.of() : List.of(problem);
  }

  @SafeVarargs
  private static List<String> merge(List<String>... lists) {
    List<String> all = new ArrayList<>();
    for (List<String> list : lists) {
      all.addAll(list);
    }
    return all;
  }

  private static String read(String file) {
    try {
      return Files.readString(ROOT.resolve(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
