package io.kipam.images;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kipam.testing.ImageTarball;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads the two tarballs the build wrote ({@code images/target/*-image.tar}) the way a container
 * runtime imports them and checks what each image promises: its name, the main class run by the
 * runtime at /opt/java, its user, no shell, and a runtime that is complete: the image's own dynamic
 * loader runs the image's java with only the image's libraries, and the node image's classpath runs
 * CniInstaller, which installs the image's kipam.
 */
class ImageTarballTest {

  private static final String VERSION = System.getProperty("kipam.version");
  private static final String LOADER = "/lib64/ld-linux-x86-64.so.2";

  @TempDir static Path unpacked;
  private static ImageTarball operator;
  private static ImageTarball node;

  @BeforeAll
  static void unpack() throws IOException {
    operator = BuiltImages.operator(unpacked);
    node = BuiltImages.node(unpacked);
  }

  @Test
  void operatorImageRunsKipamOperatorAsNonroot() {
    assertThat(operator.manifest().get("RepoTags").get(0).asText())
        .isEqualTo("kipam/kipam-operator:" + VERSION);
    assertThat(strings(operator.config().at("/config/Entrypoint")))
        .containsExactly(
            "/opt/java/bin/java",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            "@/app/jib-classpath-file",
            "io.kipam.operator.KipamOperator");
    assertThat(operator.config().at("/config/User").asText()).isEqualTo("65532:65532");
    assertThat(classpathOf(operator)).contains("/app/libs/kipam-operator-" + VERSION + ".jar");
    assertThat(operator.file("/etc/passwd")).content().contains("nonroot:x:65532:65532:");
    assertThat(operator.file("/etc/group")).content().contains("nonroot:x:65532:");
  }

  @Test
  void nodeImageRunsKipamNodeAsRootAndHoldsTheNativeKipam() {
    assertThat(node.manifest().get("RepoTags").get(0).asText())
        .isEqualTo("kipam/kipam-node:" + VERSION);
    List<String> entrypoint = new ArrayList<>(List.of("/opt/java/bin/java"));
    entrypoint.addAll(List.of(System.getProperty("kipam.node.jvmOptions").split(",")));
    entrypoint.add("-XX:AOTCache=/app/kipam-node.aot");
    entrypoint.addAll(List.of("-cp", "@/app/jib-classpath-file", "io.kipam.node.NodeDaemon"));
    assertThat(strings(node.config().at("/config/Entrypoint")))
        .containsExactlyElementsOf(entrypoint)
        .contains("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
        .anySatisfy(option -> assertThat(option).startsWith("-Xmx"));
    assertThat(node.config().at("/config/User").asText()).isEqualTo("0:0");
    assertThat(classpathOf(node)).contains("/app/libs/kipam-cni-plugin-" + VERSION + ".jar");
    assertThat(node.file("/opt/kipam/kipam")).isRegularFile().isExecutable();
  }

  @Test
  void bothImagesPutTheRuntimeOnPathAndTheirClasspathInTheJibFile() throws IOException {
    for (ImageTarball image : List.of(operator, node)) {
      assertThat(strings(image.config().at("/config/Env")))
          .anySatisfy(env -> assertThat(env).startsWith("PATH=/opt/java/bin:"));
      assertThat(image.file("/opt/java/bin/java")).isRegularFile().isExecutable();
      assertThat(image.file("/tmp")).isDirectory().isWritable();
      // The image modules have no classes of their own: the app is its jars, in /app/libs (the
      // node image's own jar, which names the image, in /app/classpath: Jib's packaged mode).
      List<String> jars =
          classpath(image).stream().filter(e -> e.startsWith("/app/libs/")).toList();
      assertThat(jars)
          .as("both programs need kipam's runtime support")
          .contains("/app/libs/kipam-runtime-" + VERSION + ".jar");
      for (String jar : jars) {
        assertThat(image.file(jar)).as("classpath entry %s", jar).isRegularFile();
      }
    }
  }

  @Test
  void neitherImageHasAShell() throws IOException {
    for (ImageTarball image : List.of(operator, node)) {
      try (Stream<Path> files = Files.walk(image.root())) {
        assertThat(files.map(p -> p.getFileName().toString()))
            .doesNotContain("sh", "bash", "dash", "ash", "busybox");
      }
      assertThat(image.file("/bin/sh")).doesNotExist();
    }
  }

  @Test
  void everyLibraryTheRuntimeLinksIsInTheImage() throws Exception {
    for (ImageTarball image : List.of(operator, node)) {
      List<Path> elfs = new ArrayList<>();
      try (Stream<Path> files = Files.walk(image.file("/opt/java"))) {
        files
            .filter(Files::isRegularFile)
            .filter(
                p ->
                    p.getParent().getFileName().toString().equals("bin")
                        || p.toString().endsWith(".so"))
            .forEach(elfs::add);
      }
      for (Path elf : elfs) {
        // The image's loader lists what it would load, from the image's directories only.
        String listing = run(image, List.of("--list", elf.toString()));
        for (String line : listing.lines().toList()) {
          assertThat(line).as("%s needs %s", elf, line).doesNotContain("not found");
          if (line.contains("=>")) {
            String resolved = line.split("=>")[1].trim().split(" ")[0];
            assertThat(resolved).as("%s needs %s", elf, line).startsWith(image.root().toString());
          }
        }
      }
    }
  }

  @Test
  void theOperatorImagesRuntimeRunsOnItsOwnLibraries() throws Exception {
    String version =
        run(operator, List.of(operator.file("/opt/java/bin/java").toString(), "-version"));

    assertThat(version).contains("OpenJDK").contains("Server VM");
  }

  @Test
  void theNodeImagesClasspathRunsCniInstallerWhichInstallsTheImagesKipam() throws Exception {
    Path bin = unpacked.resolve("host/opt/cni/bin");
    String classpath = node.unpackedClasspath();

    String output =
        run(
            node,
            List.of(
                node.file("/opt/java/bin/java").toString(),
                "-cp",
                classpath,
                "io.kipam.node.CniInstaller"),
            "KIPAM_CNI_BIN_DIR=" + bin,
            "KIPAM_CNI_SOURCE=" + node.file("/opt/kipam/kipam"),
            "KIPAM_SOCKET=/run/kipam/kipam.sock");

    assertThat(output).contains("installed kipam into " + bin);
    assertThat(bin.resolve("kipam"))
        .isExecutable()
        .hasSameBinaryContentAs(node.file("/opt/kipam/kipam"));
    assertThat(bin.resolve("kipam.conf")).hasContent("socket=/run/kipam/kipam.sock");
  }

  /**
   * The node image's runtime maps the AOT cache the build made ({@code -XX:AOTMode=on} stops the
   * JVM if it cannot): the image's java with the image's jars, where they lie unpacked (the cache
   * holds for another directory with the same jars). kipam-node starts with its classes from the
   * cache and stops at once, NODE_NAME unset.
   */
  @Test
  void theNodeImagesRuntimeMapsTheAotCacheOfItsStart() throws Exception {
    assertThat(node.file("/app/kipam-node.aot")).isRegularFile();
    // The entrypoint's options (the cache holds only for the options it was made with), the
    // cache where it lies unpacked, and a JVM that stops if it cannot use it.
    List<String> command =
        node.unpackedCommand(
            option ->
                option.startsWith("-XX:AOTCache=")
                    ? "-XX:AOTCache=" + node.file("/app/kipam-node.aot")
                    : option,
            List.of("-XX:AOTMode=on", "-Xlog:class+load=info"));

    String output = run(node, 2, command);

    assertThat(output)
        .contains("kipam-node: NODE_NAME is not set")
        .contains("io.kipam.node.NodeSettings source: shared objects file");
  }

  private static List<String> classpathOf(ImageTarball image) {
    try {
      return classpath(image);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The classpath Jib wrote, as paths inside the image. */
  private static List<String> classpath(ImageTarball image) throws IOException {
    String file = Files.readString(image.file("/app/jib-classpath-file"), StandardCharsets.UTF_8);
    return List.of(file.trim().split(":"));
  }

  /**
   * Runs the image's dynamic loader with {@code arguments}, searching only the image's library
   * directories (the ones its loader searches by default), and returns what it printed.
   */
  private static String run(ImageTarball image, List<String> arguments, String... env)
      throws IOException, InterruptedException {
    return run(image, 0, arguments, env);
  }

  /** As {@link #run(ImageTarball, List, String...)}, expecting exit code {@code exitCode}. */
  private static String run(ImageTarball image, int exitCode, List<String> arguments, String... env)
      throws IOException, InterruptedException {
    List<String> libraryDirs = new ArrayList<>();
    for (String dir :
        List.of(
            "/lib/x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu",
            "/lib64",
            "/lib",
            "/usr/lib",
            "/opt/java/lib",
            "/opt/java/lib/server")) {
      if (Files.isDirectory(image.file(dir))) {
        libraryDirs.add(image.file(dir).toString());
      }
    }
    List<String> command = new ArrayList<>();
    command.add(image.file(LOADER).toString());
    command.add("--inhibit-cache");
    command.add("--library-path");
    command.add(String.join(":", libraryDirs));
    command.addAll(arguments);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().clear();
    for (String variable : env) {
      int equals = variable.indexOf('=');
      builder.environment().put(variable.substring(0, equals), variable.substring(equals + 1));
    }
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as("%s printed:%n%s", command, output).isEqualTo(exitCode);
    return output;
  }

  private static List<String> strings(JsonNode array) {
    List<String> strings = new ArrayList<>();
    array.forEach(item -> strings.add(item.asText()));
    return strings;
  }
}
