package io.kipam.system.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a command to completion and keeps what it printed. */
public final class Exec {

  public record Result(int exit, String stdout, String stderr) {
    public Result orFail() {
      if (exit != 0) {
        throw new IllegalStateException("exit " + exit + ": " + stderr + stdout);
      }
      return this;
    }
  }

  private Exec() {}

  public static Result run(List<String> command, Map<String, String> env, String stdin) {
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    try {
      Process process = builder.start();
      CompletableFuture<byte[]> err =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return process.getErrorStream().readAllBytes();
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
      process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().close();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(120, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(command + " did not finish within 120s");
      }
      return new Result(process.exitValue(), out, new String(err.join(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public static Result run(String... command) {
    return run(List.of(command), Map.of(), "");
  }
}
