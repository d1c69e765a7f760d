package io.kipam.operator.cli;

import io.kipam.operator.ProcessRun;
import io.kipam.testing.ControlPlane;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code kubectl kipam} as a user runs it: the control plane's own kubectl, with a directory on its
 * PATH holding a symlink {@code kubectl-kipam} to the launcher {@code src/main/dist/kubectl-kipam}
 * of this built tree (the operator's jar and {@code target/operator.classpath}), and {@code
 * KUBECONFIG} naming the cluster. Each run is a process of its own, so exit codes are real.
 */
final class Plugin {

  private final ControlPlane controlPlane;
  private final Path bin;

  Plugin(ControlPlane controlPlane) {
    this.controlPlane = controlPlane;
    try {
      bin = Files.createTempDirectory("kubectl-plugins");
      Files.createSymbolicLink(
          bin.resolve("kubectl-kipam"), Path.of("src/main/dist/kubectl-kipam").toAbsolutePath());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code kubectl kipam ARGS} against the control plane. */
  ProcessRun kipam(String... args) {
    return kipam(controlPlane.adminKubeconfig(), args);
  }

  ProcessRun kipam(Path kubeconfig, String... args) {
    List<String> command = new ArrayList<>();
    command.add(controlPlane.binary("kubectl").toString());
    command.add("kipam");
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("KUBECONFIG", kubeconfig.toString());
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    builder.environment().remove("KIPAM_CLASSPATH");
    builder
        .environment()
        .put("PATH", bin + java.io.File.pathSeparator + System.getenv().getOrDefault("PATH", ""));
    try {
      ProcessRun run = ProcessRun.of(builder, "kubectl kipam");
      // What it printed, in the test's output, for a reader of the failsafe reports and the docs.
      System.out.printf(
          "$ kubectl kipam %s%n%s%s(exit %d)%n%n",
          String.join(" ", args), run.out(), run.err(), run.code());
      return run;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
