package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CniInstallerTest {

  @TempDir Path dir;
  private Path source;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeEach
  void executable() throws Exception {
    source = dir.resolve("image/opt/kipam/kipam");
    Files.createDirectories(source.getParent());
    Files.writeString(source, "#!native kipam\n");
  }

  private int run(Map<String, String> env) {
    return CniInstaller.run(
        env,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private Map<String, String> env(String... pairs) {
    Map<String, String> env = new HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  private String stderr() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void installsTheExecutableWithMode0755AndTheSocketInKipamConf() throws Exception {
    Path bin = dir.resolve("host/opt/cni/bin");

    int code =
        run(
            env(
                "KIPAM_CNI_BIN_DIR", bin.toString(),
                "KIPAM_CNI_SOURCE", source.toString(),
                "KIPAM_SOCKET", "/run/kipam/kipam.sock"));

    assertThat(code).isZero();
    assertThat(stderr()).isEmpty();
    assertThat(bin.resolve("kipam")).hasContent("#!native kipam");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(bin.resolve("kipam"))))
        .isEqualTo("rwxr-xr-x");
    // The same file install-kipam.sh writes for the native binary.
    assertThat(Files.readString(bin.resolve("kipam.conf")))
        .isEqualTo("socket=/run/kipam/kipam.sock\n");
    try (var files = Files.list(bin)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsOnly("kipam", "kipam.conf");
    }
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("installed kipam into " + bin);
  }

  @Test
  void replacesAnEarlierInstallAndRemovesKipamConfAndTheJavaVersionWithoutASocket()
      throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Files.writeString(bin.resolve("kipam"), "old launcher");
    Files.writeString(bin.resolve("kipam.conf"), "socket=/old.sock\n");
    Files.writeString(bin.resolve("kipam.jar"), "jar");
    Files.writeString(bin.resolve("kipam.jsa"), "jsa");
    Files.writeString(bin.resolve("bridge"), "another plugin");

    int code = run(env("KIPAM_CNI_BIN_DIR", bin.toString(), "KIPAM_CNI_SOURCE", source.toString()));

    assertThat(code).isZero();
    assertThat(bin.resolve("kipam")).hasContent("#!native kipam");
    try (var files = Files.list(bin)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsOnly("kipam", "bridge");
    }
  }

  @Test
  void refusesWithoutTheBinDirectory() {
    int code = run(env("KIPAM_CNI_SOURCE", source.toString()));

    assertThat(code).isNotZero();
    assertThat(stderr()).contains("KIPAM_CNI_BIN_DIR is not set").hasLineCount(1);
  }

  @Test
  void refusesWhenTheExecutableIsMissing() {
    Path bin = dir.resolve("bin");
    Path missing = dir.resolve("nothing/kipam");

    int code =
        run(env("KIPAM_CNI_BIN_DIR", bin.toString(), "KIPAM_CNI_SOURCE", missing.toString()));

    assertThat(code).isNotZero();
    assertThat(stderr())
        .contains("no kipam executable at " + missing + " (KIPAM_CNI_SOURCE)")
        .hasLineCount(1);
    assertThat(bin).doesNotExist();
  }

  @Test
  void looksForTheExecutableAtOptKipamByDefault() {
    int code = run(env("KIPAM_CNI_BIN_DIR", dir.resolve("bin").toString()));

    // This machine has no /opt/kipam/kipam: the default is named in the refusal.
    assertThat(code).isNotZero();
    assertThat(stderr()).contains("no kipam executable at /opt/kipam/kipam").hasLineCount(1);
  }

  @Test
  void refusesABinDirectoryItCannotWrite() throws Exception {
    // A path under a regular file: no user, root included, can create it.
    Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
    Path bin = file.resolve("bin");

    int code = run(env("KIPAM_CNI_BIN_DIR", bin.toString(), "KIPAM_CNI_SOURCE", source.toString()));

    assertThat(code).isNotZero();
    assertThat(stderr())
        .contains("cannot install kipam into " + bin + " (KIPAM_CNI_BIN_DIR)")
        .hasLineCount(1);
  }
}
