package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kipam.testing.Helm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * charts/kipam rendered by helm (hack/helm/build.sh) without a cluster: the objects of a render by
 * kind, namespace and name, or the message with which the chart refused its values.
 */
final class ChartRender {

  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private ChartRender() {}

  /** The objects {@code helm template} renders with {@code values} (YAML; empty: the defaults). */
  static Map<String, Map<?, ?>> render(String values) {
    return objects(Helm.run(templateWith(values)));
  }

  /** What helm printed when the chart refused {@code values}; fails if it rendered them. */
  static String refusal(String values) {
    IllegalStateException failure =
        catchThrowableOfType(IllegalStateException.class, () -> Helm.run(templateWith(values)));
    assertThat(failure).as("helm template with %s", values).isNotNull();
    return failure.getMessage();
  }

  private static String[] templateWith(String values) {
    try {
      Path file = Files.createTempFile("kipam-values", ".yaml");
      file.toFile().deleteOnExit();
      Files.writeString(file, values);
      return new String[] {
        "template",
        "kipam",
        Helm.chart().toString(),
        "--kube-version",
        Helm.KUBE_VERSION,
        "-f",
        file.toString()
      };
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The objects of a multi-document YAML stream, by kind, namespace and name. */
  static Map<String, Map<?, ?>> objects(String yaml) {
    Map<String, Map<?, ?>> objects = new TreeMap<>();
    try (var parser = YAML.getFactory().createParser(yaml)) {
      var documents = YAML.readValues(parser, JsonNode.class);
      while (documents.hasNext()) {
        JsonNode document = documents.next();
        // A document of comments alone (a template that rendered nothing) is null.
        if (document == null || document.isNull() || document.isEmpty()) {
          continue;
        }
        Map<?, ?> object = (Map<?, ?>) normalized(YAML.convertValue(document, Map.class));
        Map<?, ?> meta = (Map<?, ?>) object.get("metadata");
        String key =
            object.get("kind")
                + "/"
                + (meta.get("namespace") == null ? "" : meta.get("namespace"))
                + "/"
                + meta.get("name");
        assertThat(objects.put(key, object)).as("%s twice", key).isNull();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return objects;
  }

  /**
   * {@code value} with every number as its exact decimal value and every run of white space in a
   * string as one space: the CRD files write some integers as 128.0, which helm passes on as
   * written and kustomize prints as 128; and kustomize writes the folded ({@code >-}) CEL
   * expressions of the policies back with their more-indented lines a line apart, which changes
   * white space only.
   */
  private static Object normalized(Object value) {
    if (value instanceof Map<?, ?> map) {
      Map<Object, Object> copy = new TreeMap<>();
      map.forEach((k, v) -> copy.put(k, normalized(v)));
      return copy;
    }
    if (value instanceof List<?> list) {
      return list.stream().map(ChartRender::normalized).toList();
    }
    if (value instanceof Number number) {
      return new BigDecimal(number.toString()).stripTrailingZeros();
    }
    if (value instanceof String text) {
      return text.strip().replaceAll("\\s+", " ");
    }
    return value;
  }
}
