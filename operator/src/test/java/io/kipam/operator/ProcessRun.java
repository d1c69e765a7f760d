package io.kipam.operator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How a command the tests run (kipam-operator's {@code check}, {@code kubectl kipam}) ended: its
 * exit code and everything it printed on stdout and stderr.
 */
public record ProcessRun(int code, String out, String err) {

  /**
   * Starts {@code builder} with stdin closed and runs it to its end, at most 120 s; {@code what}
   * names it in the failure when it takes longer. Reports are small: both streams are read to the
   * end before waiting.
   */
  public static ProcessRun of(ProcessBuilder builder, String what)
      throws IOException, InterruptedException {
    Process process = builder.start();
    process.getOutputStream().close();
    CompletableFuture<String> err =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
              } catch (IOException e) {
                return e.toString();
              }
            });
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(what + " did not end within 120 s");
    }
    return new ProcessRun(process.exitValue(), out, err.join());
  }
}
