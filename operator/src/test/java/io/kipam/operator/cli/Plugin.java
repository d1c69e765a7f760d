package io.kipam.operator.cli;

import io.kipam.testing.ControlPlane;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code kubectl kipam} as a user runs it: the control plane's own kubectl, with a directory on its
 * PATH holding a symlink {@code kubectl-kipam} to the launcher {@code src/main/dist/kubectl-kipam}
 * of this built tree (the operator's jar and {@code target/operator.classpath}), and {@code
 * KUBECONFIG} naming the cluster. Each run is a process of its own, so exit codes are real.
 */
final class Plugin {

  record Run(int code, String out, String err) {}

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
  Run kipam(String... args) {
    return kipam(controlPlane.adminKubeconfig(), args);
  }

  Run kipam(Path kubeconfig, String... args) {
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
      Process process = builder.start();
      process.getOutputStream().close();
      CompletableFuture<String> err =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return new String(
                      process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                  return e.toString();
                }
              });
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(120, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("kubectl kipam did not end within 120 s");
      }
      Run run = new Run(process.exitValue(), out, err.join());
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
