package io.kipam.cni.shim;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the native kipam binary the build made ({@code target/kipam}) the way a container runtime
 * does: as a process with exactly the given environment, the configuration on stdin, the answer on
 * stdout and the exit code.
 */
final class NativeKipam {

  /** The binary {@code src/main/go/build.sh} built in the generate-resources phase. */
  static final Path BINARY = Path.of("target", "kipam").toAbsolutePath();

  /** What one call printed and returned. */
  record Result(int exit, String stdout, String stderr) {}

  private NativeKipam() {}

  /**
   * A copy of the binary in {@code dir} whose default socket is {@code socket}, set the way
   * install-kipam.sh sets it: {@code socket=PATH} in kipam.conf next to the executable.
   */
  static Path withDefaultSocket(Path dir, Path socket) throws IOException {
    Files.createDirectories(dir);
    Path copy = Files.copy(BINARY, dir.resolve("kipam"), StandardCopyOption.REPLACE_EXISTING);
    Files.writeString(dir.resolve("kipam.conf"), "socket=" + socket + "\n");
    return copy;
  }

  static Result run(Path executable, Map<String, String> env, byte[] stdin, String... args)
      throws IOException, InterruptedException {
    String[] command = new String[args.length + 1];
    command[0] = executable.toString();
    System.arraycopy(args, 0, command, 1, args.length);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().clear();
    builder.environment().putAll(env);
    Process process = builder.start();
    // Fed on its own thread: kipam stops reading after 1 MiB and one byte, and may exit before
    // the rest is written, which is what an oversize configuration is supposed to meet.
    CompletableFuture.runAsync(
        () -> {
          try (OutputStream in = process.getOutputStream()) {
            in.write(stdin);
          } catch (IOException e) {
            // a closed pipe: kipam has read all it wants
          }
        });
    CompletableFuture<byte[]> stderr =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return process.getErrorStream().readAllBytes();
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
            });
    byte[] stdout = process.getInputStream().readAllBytes();
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("kipam did not exit within 120 s");
    }
    return new Result(
        process.exitValue(),
        new String(stdout, StandardCharsets.UTF_8),
        new String(stderr.join(), StandardCharsets.UTF_8));
  }
}
