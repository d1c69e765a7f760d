package io.kipam.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * helm, built from its Go module by {@code hack/helm/build.sh} (once; later calls reuse it), run in
 * the repository root: the chart's tests install, upgrade, render and lint {@code charts/kipam}
 * with it.
 */
public final class Helm {

  /** The Kubernetes version a render is made for (helm checks the chart's kubeVersion with it). */
  public static final String KUBE_VERSION = "1.36.0";

  private static Path binary;

  private Helm() {}

  /** The chart, in the repository. */
  public static Path chart() {
    return ControlPlaneBinaries.repositoryRoot().resolve("charts/kipam");
  }

  /** {@code helm args...} without a cluster; what it printed on stdout. */
  public static String run(String... args) {
    return run(null, args);
  }

  /**
   * {@code helm args...} against the cluster of {@code kubeconfig} (none: no cluster); what it
   * printed on stdout, or a failure quoting both of its outputs.
   */
  public static String run(Path kubeconfig, String... args) {
    List<String> command = new ArrayList<>(List.of(binary().toString()));
    command.addAll(List.of(args));
    if (kubeconfig != null) {
      command.add("--kubeconfig=" + kubeconfig);
    }
    return exec(command);
  }

  private static synchronized Path binary() {
    if (binary == null) {
      Path script = ControlPlaneBinaries.repositoryRoot().resolve("hack/helm/build.sh");
      List<String> lines = exec(List.of("bash", script.toString())).strip().lines().toList();
      binary = Path.of(lines.get(lines.size() - 1));
    }
    return binary;
  }

  private static String exec(List<String> command) {
    try {
      Path errors = Files.createTempFile("kipam-helm", ".log");
      try {
        Process process =
            new ProcessBuilder(command)
                .directory(ControlPlaneBinaries.repositoryRoot().toFile())
                .redirectError(errors.toFile())
                .start();
        process.getOutputStream().close();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.MINUTES) || process.exitValue() != 0) {
          throw new IllegalStateException(
              String.join(" ", command) + " failed:\n" + out + Files.readString(errors));
        }
        return out;
      } finally {
        Files.deleteIfExists(errors);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command.get(0), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command.get(0), e);
    }
  }
}
