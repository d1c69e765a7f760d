package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The native kipam binary, run as a process, against every case of {@link KipamContract}; and what
 * only the binary promises: it is static, needs no JVM, and carries the project's version.
 */
class NativeKipamTest extends KipamContract {

  private static final int PT_DYNAMIC = 2;
  private static final int PT_INTERP = 3;

  @Override
  Call call(Map<String, String> env, byte[] stdin, Path defaultSocket) throws Exception {
    Path executable =
        defaultSocket == null
            ? NativeKipam.BINARY
            : NativeKipam.withDefaultSocket(dir.resolve("bin"), defaultSocket);
    NativeKipam.Result result = NativeKipam.run(executable, env, stdin);
    assertThat(result.stderr()).as("kipam writes nothing to stderr").isEmpty();
    return new Call(result.exit(), result.stdout());
  }

  @Test
  void theBinaryIsStaticallyLinked() throws IOException {
    assertThat(programHeaderTypes(NativeKipam.BINARY))
        .as("an ELF executable with no interpreter and no dynamic section")
        .isNotEmpty()
        .doesNotContain(PT_INTERP, PT_DYNAMIC);
  }

  @Test
  void versionNeedsNoJavaOnThePath() throws Exception {
    Path empty = Files.createDirectories(dir.resolve("empty-path"));

    NativeKipam.Result result =
        NativeKipam.run(
            NativeKipam.BINARY,
            Map.of("CNI_COMMAND", "VERSION", "PATH", empty.toString()),
            "{\"cniVersion\":\"1.0.0\"}".getBytes(StandardCharsets.UTF_8));

    assertThat(result.exit()).isZero();
    assertThat(result.stdout())
        .isEqualTo(
            "{\"cniVersion\":\"1.0.0\",\"supportedVersions\":"
                + "[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}");
  }

  @Test
  void theProjectVersionIsStampedIn() throws Exception {
    NativeKipam.Result result =
        NativeKipam.run(NativeKipam.BINARY, Map.of(), new byte[0], "--version");

    assertThat(result.exit()).isZero();
    assertThat(result.stdout()).isEqualTo("kipam " + System.getProperty("kipam.version") + "\n");
  }

  /** The p_type of every program header of a 64-bit little-endian ELF file. */
  static List<Integer> programHeaderTypes(Path file) throws IOException {
    ByteBuffer elf = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(elf.getInt(0)).as("ELF magic").isEqualTo(0x464c457f);
    assertThat(elf.get(4)).as("ELFCLASS64").isEqualTo((byte) 2);
    assertThat(elf.get(5)).as("little-endian").isEqualTo((byte) 1);
    long phoff = elf.getLong(0x20);
    int phentsize = Short.toUnsignedInt(elf.getShort(0x36));
    int phnum = Short.toUnsignedInt(elf.getShort(0x38));
    List<Integer> types = new ArrayList<>();
    for (int i = 0; i < phnum; i++) {
      types.add(elf.getInt((int) (phoff + (long) i * phentsize)));
    }
    return types;
  }
}
