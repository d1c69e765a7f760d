package io.kipam.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the control-plane binaries, building them first when they are missing.
 *
 * <p>The work is done by {@code hack/control-plane/build.sh}, the one script that knows the pinned
 * versions and kube-api-test's directory layout; this class runs it, passes its progress through to
 * the test output, and takes the binary directory from its last line of output. The script holds a
 * file lock, so test JVMs of several modules asking at once build only once.
 */
public final class ControlPlaneBinaries {

  static final String BUILD_SCRIPT = "hack/control-plane/build.sh";

  private ControlPlaneBinaries() {}

  /**
   * The directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl.
   */
  public static Path directory() {
    return buildOutput(BUILD_SCRIPT, "control-plane");
  }

  /**
   * Runs a build script of the checkout ({@code hack/...}) that prints the directory of what it
   * built (or reused) as its last line, passing its progress through with {@code label}, and
   * returns that directory.
   */
  static Path buildOutput(String scriptPath, String label) {
    Path script = repositoryRoot().resolve(scriptPath);
    List<String> stdout = new ArrayList<>();
    int exit;
    try {
      Process build =
          new ProcessBuilder("bash", script.toString())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      Thread progress = pipe(build, label);
      try (BufferedReader out =
          new BufferedReader(
              new InputStreamReader(build.getInputStream(), StandardCharsets.UTF_8))) {
        out.lines().forEach(stdout::add);
      }
      exit = build.waitFor();
      progress.join();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + script, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + scriptPath, e);
    }
    if (exit != 0 || stdout.isEmpty()) {
      throw new IllegalStateException(
          scriptPath + " failed (exit " + exit + "); its message is in the output above");
    }
    return Path.of(stdout.get(stdout.size() - 1));
  }

  /** The kipam checkout: the nearest directory above the working directory with the script. */
  public static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(BUILD_SCRIPT))) {
        return dir;
      }
    }
    throw new IllegalStateException(
        "cannot find "
            + BUILD_SCRIPT
            + " above "
            + Path.of("").toAbsolutePath()
            + "; run the tests from inside the kipam checkout");
  }

  private static Thread pipe(Process process, String prefix) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader err =
                  new BufferedReader(
                      new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                err.lines().forEach(line -> System.out.println("[" + prefix + "] " + line));
              } catch (IOException e) {
                System.out.println("[" + prefix + "] output lost: " + e.getMessage());
              }
            },
            prefix + "-output");
    t.setDaemon(true);
    t.start();
    return t;
  }
}
