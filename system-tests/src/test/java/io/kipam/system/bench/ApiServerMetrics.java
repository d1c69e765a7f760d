package io.kipam.system.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** kube-apiserver's own counters, read from its {@code /metrics}, and the benchmarks' reports. */
final class ApiServerMetrics {

  private ApiServerMetrics() {}

  /**
   * kube-apiserver's counter {@code metric} so far, summed over its series by the value of their
   * label {@code label} ({@code verb} of {@code apiserver_request_total}, say).
   */
  static Map<String, Double> sumBy(KubernetesClient client, String metric, String label) {
    Pattern series = Pattern.compile("^" + Pattern.quote(metric) + "\\{([^}]*)\\} ([0-9.e+]+)$");
    Pattern value = Pattern.compile("(?:^|,)" + Pattern.quote(label) + "=\"([^\"]+)\"");
    Map<String, Double> sums = new TreeMap<>();
    for (String line : client.raw("/metrics").split("\n")) {
      Matcher m = series.matcher(line.trim());
      if (!m.matches()) {
        continue;
      }
      Matcher v = value.matcher(m.group(1));
      if (v.find()) {
        sums.merge(v.group(1), Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return sums;
  }

  /** Prints {@code rows} and writes them to {@code file} in {@code kipam.reportDir}. */
  static void report(String file, List<String> rows) throws IOException {
    rows.forEach(System.out::println);
    Path dir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(file), String.join("\n", rows) + "\n");
  }
}
