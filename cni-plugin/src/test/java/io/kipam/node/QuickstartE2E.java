package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kipam.testing.ControlPlaneBinaries;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's first command, run exactly as the README writes it, in a fresh clone of this
 * checkout's last commit: it prints the pods with the addresses kipam gave them, then shows every
 * address back, and exits 0. One instance stays up ({@code --stay}) while two more run one after
 * the other beside it; Ctrl-C (SIGINT to its process group) stops it with nothing left running.
 */
class QuickstartE2E {

  private static final Duration RUN_LIMIT = Duration.ofMinutes(15);
  private static final Pattern POD_ROW =
      Pattern.compile("(?m)^\\s+demo-\\S+/web-\\d\\s+node-[ab]\\s+(10\\.244\\.\\d+\\.\\d+)/22\\s");
  private static Path clone;
  private static String command;

  @BeforeAll
  static void freshClone() throws Exception {
    Path root = ControlPlaneBinaries.repositoryRoot();
    command = firstCommand(Files.readString(root.resolve("README.md")));
    clone = Files.createTempDirectory("kipam-clone").resolve("kipam");
    run(List.of("git", "clone", "--quiet", root.toString(), clone.toString()), root, "clone")
        .assertExit(0);
  }

  /** The first line of the README's first shell block. */
  private static String firstCommand(String readme) {
    Matcher m = Pattern.compile("```sh\\n([^\\n]+)\\n").matcher(readme);
    assertThat(m.find()).as("a ```sh block in README.md").isTrue();
    return m.group(1).trim();
  }

  private record Run(int exit, String output) {
    Run assertExit(int expected) {
      assertThat(exit).as("exit code; it printed:%n%s", output).isEqualTo(expected);
      return this;
    }
  }

  private static Run run(List<String> cmd, Path dir, String name) throws Exception {
    Process p = start(cmd, dir, name);
    Path log = dir.getParent().resolve(name + ".out");
    if (!p.waitFor(RUN_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(cmd + " did not finish within " + RUN_LIMIT + ": " + out(log));
    }
    return new Run(p.exitValue(), out(log));
  }

  private static Process start(List<String> cmd, Path dir, String name) throws IOException {
    Path log = dir.getParent().resolve(name + ".out");
    return new ProcessBuilder(cmd)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  private static String out(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log) : "";
  }

  private static List<String> shell(String line) {
    return List.of("bash", "-c", line);
  }

  /** What a good run prints: six pods with their addresses, then none held and the pool whole. */
  private static void assertStory(String output) {
    Matcher rows = POD_ROW.matcher(output);
    List<String> addresses = rows.results().map(r -> r.group(1)).toList();
    assertThat(addresses).as("pods with their addresses in:%n%s", output).hasSize(6);
    assertThat(addresses).as("six different addresses").doesNotHaveDuplicates();
    int given = output.indexOf("each got its address from kipam");
    int back = output.indexOf("every address is back in the pool");
    assertThat(given).as(output).isPositive();
    assertThat(back).as(output).isGreaterThan(given);
    String before = output.substring(given, back);
    for (String address : addresses) {
      assertThat(before)
          .as("kubectl get ipaddresses lists %s", address)
          .contains("  $ kubectl get ipaddresses.kipam.io -A")
          .contains(address);
    }
    assertThat(output.substring(back))
        .contains("  $ kubectl get ipaddresses.kipam.io -A")
        .contains("No resources found")
        .doesNotContain("FAILED");
  }

  @Test
  void theFirstCommandShowsAddressesGivenAndReturnedAlsoBesideAnotherInstance() throws Exception {
    assertThat(command).isEqualTo("./kipam-demo");
    Process staying = start(shell("exec setsid " + command + " --stay"), clone, "staying");
    Path stayingLog = clone.getParent().resolve("staying.out");
    await()
        .atMost(RUN_LIMIT)
        .pollInterval(Duration.ofSeconds(2))
        .until(() -> out(stayingLog).contains("until Ctrl-C") || !staying.isAlive());
    String stayed = out(stayingLog);
    assertThat(staying.isAlive()).as("the staying instance runs; it printed:%n%s", stayed).isTrue();
    assertStory(stayed);
    assertThat(stayed).contains("export KUBECONFIG=");

    Run second = run(shell(command), clone, "second").assertExit(0);
    assertStory(second.output());
    Run third = run(shell(command), clone, "third").assertExit(0);
    assertStory(third.output());
    System.out.println("./kipam-demo printed:\n" + third.output());

    new ProcessBuilder("kill", "-INT", "--", "-" + staying.pid()).start().waitFor();
    assertThat(staying.waitFor(2, TimeUnit.MINUTES)).as("stopped by Ctrl-C").isTrue();
    assertThat(staying.exitValue()).as(out(stayingLog)).isZero();
    assertThat(out(stayingLog)).contains("everything it started is stopped");
    for (Run r : List.of(second, third, new Run(0, out(stayingLog)))) {
      assertThat(r.output()).doesNotContain("Exception").doesNotContain("\tat ");
    }
    assertThat(Exec.run("ip", "netns", "list").stdout())
        .as("no network namespace of a demo is left")
        .doesNotContain("kipam-web-");
  }
}
