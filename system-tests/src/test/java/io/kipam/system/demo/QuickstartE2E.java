package io.kipam.system.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kipam.system.harness.Exec;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.HostRuntime;
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
 * address back, and exits 0; first alone, then beside another instance. One instance stays up
 * ({@code --stay}) while two more run one after the other beside it; Ctrl-C (SIGINT to its process
 * group) stops it with nothing left running.
 *
 * <p>Each run's first line says which story it tells. Where a real node can run here, the staying
 * instance tells the real-node story (a Deployment on kubelet and containerd) and the two beside
 * it, finding the machine's one real node taken, say so and tell the simulated one; elsewhere all
 * three say why not and tell the simulated one.
 */
class QuickstartE2E {

  private static final Duration RUN_LIMIT = Duration.ofMinutes(15);
  private static final String REAL_NODE = "kipam-demo: on a real node";
  private static final String SIMULATED = "kipam-demo: no real node here: ";

  /** A row of the simulated story's pod table. */
  private static final Pattern SIMULATED_POD_ROW =
      Pattern.compile("(?m)^\\s+demo-\\S+/web-\\d\\s+node-[ab]\\s+(10\\.244\\.\\d+\\.\\d+)/22\\s");

  /** A row of {@code kubectl get pods -o wide} in the real-node story. */
  private static final Pattern REAL_POD_ROW =
      Pattern.compile(
          "(?m)^\\s+web-\\S+\\s+1/1\\s+Running\\s.*?\\s(10\\.244\\.\\d+\\.\\d+)\\s+kipam-real-node\\s");

  /** The sample pool in {@code kubectl get ippools.kipam.io}, with nothing allocated. */
  private static final Pattern POOL_EMPTY =
      Pattern.compile("(?m)^\\s+pods-v4\\s+10\\.244\\.0\\.0/22\\s+26\\s+0\\s+\\d+\\s+True\\s");

  /**
   * A row of {@code kubectl get ipaddresses.kipam.io -n default -o wide} in the real-node story's
   * Multus step: the pod's address on {@code iface} from {@code pool}.
   */
  private static Pattern secondNetworkRow(String pool, String iface) {
    return Pattern.compile(
        "(?m)^\\s+"
            + Pattern.quote(pool)
            + "\\.\\S+\\s+\\S+\\s+"
            + Pattern.quote(pool)
            + "\\s+storage-client\\s+kipam-real-node\\s+"
            + iface
            + "\\s");
  }

  private static final Pattern NODE_NETNS = Pattern.compile("network namespace (kipam-node-\\w+)");
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

  /**
   * What a good run prints: which story in its first line, six pods with their addresses, then none
   * held and the pool whole. Returns whether it was the real-node story.
   */
  private static boolean assertStory(String output) {
    String first = output.lines().findFirst().orElse("");
    boolean real = first.startsWith(REAL_NODE);
    if (!real) {
      assertThat(first).as("the first line says which story").startsWith(SIMULATED);
    }
    Matcher rows = (real ? REAL_POD_ROW : SIMULATED_POD_ROW).matcher(output);
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
        .containsPattern(POOL_EMPTY)
        .doesNotContain("FAILED");
    if (real) {
      // The last step: a pod with a second interface from the sample Multus network.
      int multus = output.indexOf("pod default/storage-client Running");
      int gone = output.indexOf("pod storage-client deleted: both its addresses are back");
      assertThat(multus).as(output).isGreaterThan(back);
      assertThat(gone).as(output).isGreaterThan(multus);
      assertThat(output.substring(multus, gone))
          .contains("  $ kubectl get ipaddresses.kipam.io -n default -o wide")
          .containsPattern(secondNetworkRow("pods-v4", "eth0"))
          .containsPattern(secondNetworkRow("storage-v4", "net1"));
      assertThat(output.substring(gone)).contains("No resources found");
    }
    return real;
  }

  @Test
  void theFirstCommandShowsAddressesGivenAndReturnedAlsoBesideAnotherInstance() throws Exception {
    assertThat(command).isEqualTo("./kipam-demo");
    // Exactly as written, alone: the story this machine can tell (the real node where it can run).
    Run first = run(shell(command), clone, "first").assertExit(0);
    assertThat(assertStory(first.output()))
        .as("the real-node story where a real node can run; it printed:%n%s", first.output())
        .isEqualTo(HostRuntime.missing().isEmpty());
    System.out.println("./kipam-demo printed:\n" + first.output());
    // Ctrl-C as a terminal sends it: a test run started from a background job inherits SIGINT
    // ignored, and bash cannot reset a signal ignored on entry, so perl puts it back to its default
    // before the demo starts (same process, then setsid: the demo leads its own process group).
    Process staying =
        start(
            shell(
                "exec perl -e '$SIG{INT} = \"DEFAULT\"; exec @ARGV or die $!' setsid "
                    + command
                    + " --stay"),
            clone,
            "staying");
    Path stayingLog = clone.getParent().resolve("staying.out");
    try {
      besideTheStayingInstance(staying, stayingLog, first);
    } finally {
      // A failed assertion must not leave the staying instance (and its cluster) running.
      if (staying.isAlive()) {
        new ProcessBuilder("kill", "-INT", "--", "-" + staying.pid()).start().waitFor();
        if (!staying.waitFor(2, TimeUnit.MINUTES)) {
          staying.destroyForcibly();
        }
      }
    }
  }

  private void besideTheStayingInstance(Process staying, Path stayingLog, Run first)
      throws Exception {
    await()
        .atMost(RUN_LIMIT)
        .pollInterval(Duration.ofSeconds(2))
        .until(() -> out(stayingLog).contains("until Ctrl-C") || !staying.isAlive());
    String stayed = out(stayingLog);
    assertThat(staying.isAlive()).as("the staying instance runs; it printed:%n%s", stayed).isTrue();
    boolean real = assertStory(stayed);
    assertThat(real)
        .as("the real-node story where a real node can run; it printed:%n%s", stayed)
        .isEqualTo(HostRuntime.missing().isEmpty());
    assertThat(stayed).contains("export KUBECONFIG=");

    Run second = run(shell(command), clone, "second").assertExit(0);
    assertThat(assertStory(second.output())).as("beside a run that has the real node").isFalse();
    Run third = run(shell(command), clone, "third").assertExit(0);
    assertThat(assertStory(third.output())).isFalse();
    if (real) {
      assertThat(second.output().lines().findFirst().orElse(""))
          .contains("another kipam run has this machine's real node");
    }
    System.out.println("./kipam-demo --stay printed:\n" + stayed);
    System.out.println("./kipam-demo beside it printed:\n" + third.output());

    new ProcessBuilder("kill", "-INT", "--", "-" + staying.pid()).start().waitFor();
    assertThat(staying.waitFor(2, TimeUnit.MINUTES)).as("stopped by Ctrl-C").isTrue();
    assertThat(staying.exitValue()).as(out(stayingLog)).isZero();
    assertThat(out(stayingLog)).contains("everything it started is stopped");
    for (Run r : List.of(first, second, third, new Run(0, out(stayingLog)))) {
      assertThat(r.output()).doesNotContain("Exception").doesNotContain("\tat ");
    }
    String netns = Exec.run("ip", "netns", "list").stdout();
    assertThat(netns).as("no network namespace of a demo is left").doesNotContain("kipam-web-");
    Matcher nodeNetns = NODE_NETNS.matcher(stayed);
    if (real) {
      assertThat(nodeNetns.find()).as(stayed).isTrue();
      assertThat(netns).as("the real node's namespace is gone").doesNotContain(nodeNetns.group(1));
    }
  }

  /**
   * Without root there are no network namespaces, no containerd and no kubelet: the first line says
   * so and the simulated story runs, and exits 0. As root, the demo is run by the unprivileged user
   * {@code nobody} ({@code setpriv}) in a clone of its own, with a copy of this machine's Maven
   * repository as its {@code ~/.m2} (the build runs offline from it, as a second checkout would)
   * and the control plane binaries built earlier (hard links, {@code KUBE_API_TEST_DIR}); run by
   * any other user, it runs as that user.
   */
  @Test
  void withoutRootTheFirstLineSaysWhyAndTheSimulatedStoryRuns() throws Exception {
    Run run;
    if (Exec.run("id", "-u").stdout().trim().equals("0")) {
      run = runAsNobody();
    } else {
      run = run(shell(command), clone, "unprivileged");
    }
    run.assertExit(0);
    List<String> lines = run.output().lines().toList();
    assertThat(lines.get(0))
        .as("one line says why")
        .startsWith(SIMULATED + "not root")
        .endsWith("the story runs with simulated nodes");
    assertThat(lines.get(1)).startsWith("kipam-demo: building kipam");
    assertThat(assertStory(run.output())).isFalse();
    assertThat(run.output())
        .contains("kipam-demo: not root, so no network namespaces")
        .contains("kipam-demo: everything it started is stopped")
        .doesNotContain("Exception");
    System.out.println("./kipam-demo without root printed:\n" + run.output());
  }

  private static Run runAsNobody() throws Exception {
    Path base = Files.createTempDirectory("kipam-nobody");
    try {
      Path home = base.resolve("home");
      Path binaries = base.resolve("kubeapitest");
      Path root = ControlPlaneBinaries.repositoryRoot();
      Path userHome = Path.of(System.getProperty("user.home"));
      String kubeApiTest =
          System.getenv()
              .getOrDefault("KUBE_API_TEST_DIR", userHome.resolve(".kubeapitest").toString());
      Files.createDirectories(home);
      for (List<String> step :
          List.of(
              List.of("chmod", "755", base.toString()),
              List.of("git", "clone", "--quiet", root.toString(), home.resolve("kipam").toString()),
              List.of(
                  "cp", "-a", userHome.resolve(".m2").toString(), home.resolve(".m2").toString()),
              List.of("chown", "-R", "nobody:", home.toString()),
              // Hard links where /tmp and the binaries share a file system, else a copy.
              List.of(
                  "bash",
                  "-c",
                  "cp -al \"$0\" \"$1\" 2>/dev/null || { rm -rf \"$1\"; cp -a \"$0\" \"$1\"; }",
                  kubeApiTest,
                  binaries.toString()),
              List.of("rm", "-f", binaries.resolve("k8s/.kipam-build.lock").toString()),
              List.of(
                  "chown", "nobody:", binaries.toString(), binaries.resolve("k8s").toString()))) {
        run(step, home, "nobody-setup").assertExit(0);
      }
      List<String> demo =
          List.of(
              "setpriv",
              "--reuid=nobody",
              "--regid=nogroup",
              "--clear-groups",
              "env",
              "HOME=" + home,
              "USER=nobody",
              "LOGNAME=nobody",
              "KUBE_API_TEST_DIR=" + binaries,
              // nobody's passwd home does not exist; Maven takes ~/.m2 from user.home, not HOME.
              "MAVEN_OPTS=-Duser.home=" + home,
              "bash",
              "-c",
              command);
      return run(demo, home.resolve("kipam"), "nobody");
    } finally {
      new ProcessBuilder("rm", "-rf", base.toString()).start().waitFor();
    }
  }
}
