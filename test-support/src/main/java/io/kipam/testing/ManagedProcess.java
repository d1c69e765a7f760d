package io.kipam.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * One control-plane component running as a child process, with its output appended to a log file.
 * The command is kept so the component can be stopped and started again on the same ports, which is
 * how tests take the API server away and bring it back.
 */
final class ManagedProcess {

  private final String name;
  private final List<String> command;
  private final Path logFile;
  private Process process;

  ManagedProcess(String name, List<String> command, Path logFile) {
    this.name = name;
    this.command = List.copyOf(command);
    this.logFile = logFile;
  }

  String name() {
    return name;
  }

  Path logFile() {
    return logFile;
  }

  synchronized void start() {
    if (isAlive()) {
      return;
    }
    try {
      Files.createDirectories(logFile.getParent());
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
              .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + " (" + command.get(0) + ")", e);
    }
  }

  /** The running process's pid; empty when it is not running. */
  synchronized OptionalLong pid() {
    return isAlive() ? OptionalLong.of(process.pid()) : OptionalLong.empty();
  }

  synchronized boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** Stops the process with SIGTERM, escalating to SIGKILL when it does not exit in 15 s. */
  synchronized void stop() {
    stop(Duration.ofSeconds(15));
  }

  /** Stops the process with SIGTERM, escalating to SIGKILL when it does not exit within grace. */
  synchronized void stop(Duration grace) {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** The last lines of the log, for error messages that must explain a failed start. */
  String logTail(int lines) {
    try {
      if (!Files.exists(logFile)) {
        return "(no output)";
      }
      List<String> all = Files.readAllLines(logFile, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(log unreadable: " + e.getMessage() + ")";
    }
  }

  private static java.io.File nullDevice() {
    return new java.io.File("/dev/null");
  }
}
