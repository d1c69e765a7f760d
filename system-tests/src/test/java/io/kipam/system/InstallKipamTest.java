package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.system.harness.Installer;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** install-kipam.sh installs the native binary: static, no JVM, with the given default socket. */
class InstallKipamTest {

  @TempDir Path dir;

  @Test
  void installsAStaticBinaryThatNeedsNoJava() throws Exception {
    Path kipam = Installer.install(dir.resolve("bin"), dir.resolve("kipam.sock"));

    assertThat(Files.readAllBytes(kipam)).startsWith(0x7f, 'E', 'L', 'F');
    assertThat(dir.resolve("bin")).isDirectoryNotContaining("glob:**/kipam.jar");
    assertThat(run("file", "-b", kipam.toString()).stdout).contains("statically linked");

    Result version =
        run(
            Map.of("CNI_COMMAND", "VERSION", "PATH", Files.createDirectory(dir.resolve("p")) + ""),
            "{\"cniVersion\":\"0.3.1\"}",
            kipam.toString());
    assertThat(version.exit).isZero();
    assertThat(version.stdout).startsWith("{\"cniVersion\":\"0.3.1\",\"supportedVersions\":[");
  }

  @Test
  void configurationsNamingNoSocketReachTheInstalledSocket() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    Path kipam = Installer.install(dir.resolve("bin"), socket);
    assertThat(dir.resolve("bin/kipam.conf")).hasContent("socket=" + socket);

    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(socket));
      CompletableFuture<Void> daemon =
          CompletableFuture.runAsync(
              () -> {
                try (SocketChannel client = server.accept()) {
                  client.read(ByteBuffer.allocate(1 << 16));
                  client.write(
                      ByteBuffer.wrap(
                          ("HTTP/1.1 200 OK\r\nKipam-Exit-Code: 0\r\nContent-Length: 2\r\n"
                                  + "Connection: close\r\n\r\n{}")
                              .getBytes(StandardCharsets.US_ASCII)));
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              });

      Result add = run(Map.of("CNI_COMMAND", "ADD"), "{\"cniVersion\":\"1.0.0\"}", kipam + "");

      daemon.get(30, TimeUnit.SECONDS);
      assertThat(add.exit).isZero();
      assertThat(add.stdout).isEqualTo("{}");
    }
  }

  private record Result(int exit, String stdout) {}

  private static Result run(String... command) throws Exception {
    return run(null, "", command);
  }

  private static Result run(Map<String, String> env, String stdin, String... command)
      throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command);
    if (env != null) {
      builder.environment().clear();
      builder.environment().putAll(env);
    }
    Process process = builder.redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (var in = process.getOutputStream()) {
      in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Result(process.exitValue(), stdout);
  }
}
