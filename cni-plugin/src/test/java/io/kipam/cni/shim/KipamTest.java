package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Java executable, called in-process, against every case of {@link KipamContract}. */
class KipamTest extends KipamContract {

  @Override
  Call call(Map<String, String> env, byte[] stdin, Path defaultSocket) {
    return call(env, new ByteArrayInputStream(stdin), defaultSocket);
  }

  private static Call call(Map<String, String> env, InputStream stdin, Path defaultSocket) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
    int exit =
        defaultSocket == null
            ? Kipam.run(env, stdin, print)
            : Kipam.run(env, stdin, print, defaultSocket);
    return new Call(exit, out.toString(StandardCharsets.UTF_8));
  }

  @Test
  void unexpectedFailureIsAnInternalErrorOnStdout() {
    InputStream failing =
        new InputStream() {
          @Override
          public int read() {
            throw new StackOverflowError();
          }
        };

    Call call = call(Map.of("CNI_COMMAND", "ADD"), failing, null);

    assertThat(call.exit()).isEqualTo(1);
    assertThat(call.stdout())
        .startsWith("{\"cniVersion\":\"1.1.0\",\"code\":999,")
        .contains("StackOverflowError");
  }
}
