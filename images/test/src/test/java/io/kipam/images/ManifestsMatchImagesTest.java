package io.kipam.images;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kipam.testing.ImageTarball;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * config/node/daemonset.yaml and config/operator/deployment.yaml run what the images the build
 * wrote hold: the image each container names is the tarball's tag; a container that sets its
 * command runs a program and a classpath file that exist in the image, with the main class in one
 * of the image's jars, and no shell; a container that does not runs the image's entrypoint with the
 * expected main class; a user set in a manifest is the image's user.
 */
class ManifestsMatchImagesTest {

  private static final Path CONFIG = Path.of(System.getProperty("kipam.configDir"));
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final List<String> SHELLS = List.of("sh", "bash", "dash", "ash", "busybox");

  @TempDir static Path unpacked;
  private static ImageTarball operator;
  private static ImageTarball node;
  private static JsonNode daemonSet;
  private static JsonNode deployment;

  @BeforeAll
  static void read() throws IOException {
    operator = BuiltImages.operator(unpacked);
    node = BuiltImages.node(unpacked);
    daemonSet = YAML.readTree(CONFIG.resolve("node/daemonset.yaml").toFile());
    deployment = YAML.readTree(CONFIG.resolve("operator/deployment.yaml").toFile());
  }

  @Test
  void everyContainerNamesTheTagOfItsImagesTarball() {
    for (JsonNode container : containers(daemonSet)) {
      assertThat(container.get("image").asText())
          .as("image of %s", container.get("name").asText())
          .isEqualTo(tag(node));
    }
    for (JsonNode container : containers(deployment)) {
      assertThat(container.get("image").asText())
          .as("image of %s", container.get("name").asText())
          .isEqualTo(tag(operator));
    }
  }

  @Test
  void theInitContainerRunsCniInstallerFromTheNodeImagesClasspath() throws IOException {
    JsonNode init = daemonSet.at("/spec/template/spec/initContainers").get(0);
    List<String> command = strings(init.get("command"));

    assertThat(command).last().isEqualTo("io.kipam.node.CniInstaller");
    assertThat(program(node, command.get(0))).as("program %s", command.get(0)).isExecutable();
    String classpathFile =
        command.stream().filter(a -> a.startsWith("@")).findFirst().orElseThrow().substring(1);
    assertThat(node.file(classpathFile)).isRegularFile();
    assertThat(jarsHolding(node, classpathFile, "io/kipam/node/CniInstaller.class")).isNotEmpty();
  }

  @Test
  void containersWithoutACommandRunTheImagesEntrypoint() {
    JsonNode daemon = daemonSet.at("/spec/template/spec/containers").get(0);
    JsonNode operatorContainer = deployment.at("/spec/template/spec/containers").get(0);

    assertThat(daemon.has("command")).isFalse();
    assertThat(operatorContainer.has("command")).isFalse();
    assertThat(strings(node.config().at("/config/Entrypoint")))
        .last()
        .isEqualTo("io.kipam.node.NodeDaemon");
    assertThat(strings(operator.config().at("/config/Entrypoint")))
        .last()
        .isEqualTo("io.kipam.operator.KipamOperator");
  }

  @Test
  void aUserSetInAManifestIsTheImagesUser() {
    checkUser(daemonSet, node);
    checkUser(deployment, operator);
  }

  @Test
  void noCommandRunsAShell() {
    for (JsonNode manifest : List.of(daemonSet, deployment)) {
      for (JsonNode container : containers(manifest)) {
        List<String> words = new ArrayList<>(strings(container.get("command")));
        words.addAll(strings(container.get("args")));
        for (String word : words) {
          assertThat(SHELLS)
              .as("%s runs %s", container.get("name").asText(), words)
              .doesNotContain(Path.of(word).getFileName().toString());
        }
        assertThat(words).as("%s", container.get("name").asText()).doesNotContain("-c");
      }
    }
  }

  /** runAsUser and runAsGroup of each container, or else of its pod, equal the image's User. */
  private static void checkUser(JsonNode manifest, ImageTarball image) {
    String[] user = image.config().at("/config/User").asText().split(":");
    JsonNode pod = manifest.at("/spec/template/spec/securityContext");
    for (JsonNode container : containers(manifest)) {
      JsonNode own = container.path("securityContext");
      for (String field : List.of("runAsUser", "runAsGroup")) {
        JsonNode value = own.has(field) ? own.get(field) : pod.get(field);
        if (value != null) {
          String expected = field.equals("runAsUser") ? user[0] : user[user.length - 1];
          assertThat(value.asText())
              .as("%s of %s", field, container.get("name").asText())
              .isEqualTo(expected);
        }
      }
    }
  }

  /** A command's program as the runtime finds it: a path, or a name on the image's PATH. */
  private static Path program(ImageTarball image, String program) {
    if (program.startsWith("/")) {
      return image.file(program);
    }
    String path =
        strings(image.config().at("/config/Env")).stream()
            .filter(e -> e.startsWith("PATH="))
            .findFirst()
            .orElseThrow()
            .substring("PATH=".length());
    for (String dir : path.split(":")) {
      Path candidate = image.file(dir + "/" + program);
      if (Files.isRegularFile(candidate)) {
        return candidate;
      }
    }
    return image.file("/" + program + "-not-on-PATH");
  }

  /** The jars of the image's classpath file that hold {@code entry}. */
  private static List<String> jarsHolding(ImageTarball image, String classpathFile, String entry)
      throws IOException {
    String classpath = Files.readString(image.file(classpathFile), StandardCharsets.UTF_8).trim();
    List<String> holding = new ArrayList<>();
    for (String jar : classpath.split(":")) {
      if (jar.endsWith(".jar")) {
        try (ZipFile zip = new ZipFile(image.file(jar).toFile())) {
          if (zip.getEntry(entry) != null) {
            holding.add(jar);
          }
        }
      }
    }
    return holding;
  }

  private static String tag(ImageTarball image) {
    return image.manifest().get("RepoTags").get(0).asText();
  }

  private static List<JsonNode> containers(JsonNode manifest) {
    List<JsonNode> all = new ArrayList<>();
    manifest.at("/spec/template/spec/initContainers").forEach(all::add);
    manifest.at("/spec/template/spec/containers").forEach(all::add);
    return all;
  }

  private static List<String> strings(JsonNode array) {
    List<String> strings = new ArrayList<>();
    if (array != null) {
      array.forEach(item -> strings.add(item.asText()));
    }
    return strings;
  }
}
