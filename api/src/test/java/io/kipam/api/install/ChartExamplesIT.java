package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.type.TypeReference;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Helm;
import io.kipam.testing.WithControlPlane;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every example charts/kipam/values.yaml shows (a comment ending in "e.g." and the indented lines
 * after it, the example of the key below them) is rendered by the chart and applied, server-side
 * dry run, against the real CRDs on a real control plane: an example the CRDs refuse fails here.
 */
@WithControlPlane
class ChartExamplesIT {

  private static final Path ROOT = ControlPlaneBinaries.repositoryRoot();
  private static final Pattern KEY = Pattern.compile("^( *)([A-Za-z][A-Za-z0-9]*):.*$");
  private static final Pattern EXAMPLE_LINE = Pattern.compile("^ *# {3}(.*)$");

  private final ControlPlane controlPlane = ControlPlane.shared();

  @Test
  void everyExampleOfValuesYamlPassesTheCrds() throws Exception {
    Map<String, Object> examples = examples(Helm.chart().resolve("values.yaml"));
    assertThat(examples).as("examples found in values.yaml").containsKeys("pools", "networks");

    Map<String, Map<?, ?>> defaults = ChartRender.render("");
    Map<String, Map<?, ?>> rendered =
        ChartRender.render(ChartRender.YAML.writeValueAsString(examples));
    rendered.keySet().removeAll(defaults.keySet());
    assertThat(rendered)
        .containsKeys("IPPool//pods-v4", "NetworkAttachmentDefinition/default/storage");

    installCrds();
    Path manifest = Files.createTempFile("kipam-examples", ".yaml");
    try {
      // The render's numbers are BigDecimals, written plain (100, not 1E+2) for the API server.
      var writer = ChartRender.YAML.writer().with(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);
      StringBuilder yaml = new StringBuilder();
      for (Map<?, ?> object : rendered.values()) {
        yaml.append("---\n").append(writer.writeValueAsString(object));
      }
      Files.writeString(manifest, yaml);
      String applied =
          controlPlane.kubectl(
              "apply", "--dry-run=server", "--validate=strict", "-f", manifest.toString());
      System.out.println("values.yaml's examples " + examples.keySet() + ": " + applied.strip());
    } finally {
      Files.deleteIfExists(manifest);
    }
  }

  /** The chart's CRDs (links to config/crd) and the NetworkAttachmentDefinition CRD (Multus's). */
  private void installCrds() throws IOException {
    Path crds = Helm.chart().resolve("crds");
    List<String> names = new ArrayList<>();
    try (var files = Files.list(crds)) {
      for (Path file : files.sorted().toList()) {
        controlPlane.kubectl("apply", "--server-side", "--force-conflicts", "-f", file.toString());
        names.add("crd/" + file.getFileName().toString().replaceFirst("\\.yaml$", ""));
      }
    }
    controlPlane.kubectl(
        "apply", "--server-side", "--force-conflicts", "-f", networksCrd().toString());
    names.add("crd/network-attachment-definitions.k8s.cni.cncf.io");
    List<String> wait = new ArrayList<>(List.of("wait", "--for=condition=Established"));
    wait.addAll(names);
    wait.add("--timeout=60s");
    controlPlane.kubectl(wait.toArray(String[]::new));
  }

  /** The NetworkAttachmentDefinition CRD, which hack/whereabouts/build.sh takes from its module. */
  private static Path networksCrd() throws IOException {
    try {
      Process build =
          new ProcessBuilder("bash", ROOT.resolve("hack/whereabouts/build.sh").toString())
              .directory(ROOT.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      build.getOutputStream().close();
      List<String> lines =
          new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
              .strip()
              .lines()
              .toList();
      assertThat(build.waitFor()).as("hack/whereabouts/build.sh").isZero();
      return Path.of(lines.get(lines.size() - 1), "crds", "networks-crd.yaml");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The examples of {@code valuesYaml} as one set of values: each example (the lines "# ..." after
   * a comment line ending in "e.g.") under the path of the key that follows its comment.
   */
  static Map<String, Object> examples(Path valuesYaml) throws IOException {
    Map<String, Object> values = new LinkedHashMap<>();
    List<String> lines = Files.readAllLines(valuesYaml);
    List<String> path = new ArrayList<>();
    List<Integer> indents = new ArrayList<>();
    StringBuilder example = null;
    for (String line : lines) {
      Matcher key = KEY.matcher(line);
      Matcher exampleLine = EXAMPLE_LINE.matcher(line);
      if (key.matches()) {
        int indent = key.group(1).length();
        while (!indents.isEmpty() && indents.get(indents.size() - 1) >= indent) {
          indents.remove(indents.size() - 1);
          path.remove(path.size() - 1);
        }
        indents.add(indent);
        path.add(key.group(2));
        if (example != null) {
          put(values, path, example.toString());
          example = null;
        }
      } else if (line.strip().startsWith("#") && line.strip().endsWith("e.g.")) {
        example = new StringBuilder();
      } else if (example != null && exampleLine.matches()) {
        example.append(exampleLine.group(1)).append('\n');
      }
    }
    return values;
  }

  private static void put(Map<String, Object> values, List<String> path, String example)
      throws IOException {
    Map<String, Object> parent = values;
    for (String key : path.subList(0, path.size() - 1)) {
      @SuppressWarnings("unchecked")
      Map<String, Object> child =
          (Map<String, Object>) parent.computeIfAbsent(key, k -> new LinkedHashMap<>());
      parent = child;
    }
    Object value = ChartRender.YAML.readValue(example, new TypeReference<Object>() {});
    assertThat(parent.put(path.get(path.size() - 1), value))
        .as("two examples of %s", String.join(".", path))
        .isNull();
  }
}
