package io.kipam.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The entry point without a cluster: usage, unknown commands, and every bad argument or report
 * refused with exit 2 and one line that names what is wrong, before any API call.
 */
class KubectlKipamTest {

  @TempDir Path dir;

  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        KubectlKipam.run(
            List.of(args),
            Map.of(),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void noArgumentsPrintsTheUsageAndExitsTwo() {
    Run run = run();
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).contains("usage: kubectl kipam COMMAND").contains("who-has IP");
    assertThat(run.out()).isEmpty();
  }

  @Test
  void helpPrintsTheUsageAndExitsZero() {
    for (String help : List.of("help", "--help", "-h")) {
      Run run = run(help);
      assertThat(run.code()).isZero();
      assertThat(run.out()).contains("usage: kubectl kipam COMMAND").contains("release");
    }
  }

  @Test
  void anUnknownCommandIsNamedAndExitsTwo() {
    Run run = run("free", "10.0.0.1");
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .isEqualTo(
            "kubectl kipam: unknown command free (commands: check, pools, who-has, release,"
                + " import, help)\n");
  }

  @Test
  void eachCommandHasAHelp() {
    assertThat(run("pools", "--help").out()).startsWith("usage: kubectl kipam pools");
    assertThat(run("who-has", "--help").out()).startsWith("usage: kubectl kipam who-has IP");
    assertThat(run("release", "--help").out()).startsWith("usage: kubectl kipam release");
    assertThat(run("check", "--help").out()).startsWith("usage: kipam-operator check");
  }

  @Test
  void importNamesItsSourceAndRefusesAnyOtherBeforeAnyApiCall() {
    assertThat(run("import", "--help").out())
        .startsWith("usage: kubectl kipam import whereabouts [--dry-run]");
    Run none = run("import");
    assertThat(none.code()).isEqualTo(2);
    assertThat(none.err()).isEqualTo("kubectl kipam import: import needs SOURCE (see --help)\n");
    Run other = run("import", "calico", "--dry-run");
    assertThat(other.code()).isEqualTo(2);
    assertThat(other.err())
        .isEqualTo("kubectl kipam import: cannot import from calico (sources: whereabouts)\n");
    Run option = run("import", "whereabouts", "--pool", "x");
    assertThat(option.code()).isEqualTo(2);
    assertThat(option.err())
        .isEqualTo("kubectl kipam import: unknown option --pool for import (see --help)\n");
    Run empty = run("import", "whereabouts", "--namespace=");
    assertThat(empty.code()).isEqualTo(2);
    assertThat(empty.err()).contains("--namespace needs a value, not an empty one");
  }

  @Test
  void aMalformedIpIsNamed() {
    for (String bad : List.of("10.0.0.300", "10.0.0", "fe80::1%eth0", "pods.10-0-0-1", "")) {
      Run run = run("who-has", bad);
      assertThat(run.code()).as(bad).isEqualTo(2);
      assertThat(run.err())
          .as(bad)
          .startsWith("kubectl kipam who-has: '" + bad + "' is not an IP address")
          .hasLineCount(1);
    }
  }

  @Test
  void whoHasNeedsExactlyOneIp() {
    assertThat(run("who-has").err())
        .isEqualTo("kubectl kipam who-has: who-has needs IP (see --help)\n");
    assertThat(run("who-has", "10.0.0.1", "10.0.0.2").err())
        .isEqualTo(
            "kubectl kipam who-has: unexpected argument 10.0.0.2 for who-has (see --help)\n");
    assertThat(run("who-has", "10.0.0.1", "--pool", "p").err())
        .isEqualTo("kubectl kipam who-has: unknown option --pool for who-has (see --help)\n");
  }

  @Test
  void poolsRefusesBadOptions() {
    assertThat(run("pools", "-o", "yaml").err())
        .isEqualTo("kubectl kipam pools: -o must be text or json, not yaml\n");
    assertThat(run("pools", "--pool").err())
        .isEqualTo("kubectl kipam pools: --pool needs a value\n");
    assertThat(run("pools", "--pool=").err())
        .isEqualTo("kubectl kipam pools: --pool needs a value, not an empty one\n");
    assertThat(run("pools", "extra").err())
        .isEqualTo("kubectl kipam pools: unexpected argument extra for pools (see --help)\n");
    assertThat(run("pools", "--from-report", "r.json").code()).isEqualTo(2);
  }

  @Test
  void releaseNeedsAReport() {
    Run run = run("release");
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .isEqualTo("kubectl kipam release: release needs --from-report FILE (see --help)\n");
  }

  @Test
  void aMissingReportIsNamed() {
    Path missing = dir.resolve("missing.json");
    Run run = run("release", "--from-report", missing.toString());
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .isEqualTo("kubectl kipam release: cannot read the report " + missing + ": no such file\n");
  }

  @Test
  void aReportThatIsNotJsonIsNamed() throws Exception {
    Path file = write("kipam-operator check: 1 pool read\n");
    Run run = run("release", "--from-report", file.toString());
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("kubectl kipam release: the report " + file + " is not JSON")
        .hasLineCount(1);
  }

  @Test
  void jsonOfAnotherFormatIsNamed() throws Exception {
    for (String other :
        List.of("[]", "{\"items\":[]}", "{\"pools\":[],\"problems\":{},\"clean\":true}", "null")) {
      Path file = write(other);
      Run run = run("release", "--from-report", file.toString());
      assertThat(run.code()).as(other).isEqualTo(2);
      assertThat(run.err())
          .as(other)
          .isEqualTo(
              "kubectl kipam release: the report "
                  + file
                  + " is not a report of `kubectl kipam check -o json` (it needs \"pools\","
                  + " \"problems\" and \"clean\")\n");
    }
  }

  @Test
  void aBadOrphanInTheReportIsNamedByItsIndex() throws Exception {
    String head = "{\"pools\":[],\"clean\":false,\"problems\":[";
    assertThat(releaseError(head + "{\"kind\":\"orphan\",\"reason\":\"pod\"}]}"))
        .endsWith(": problems[0] (an orphan) has no \"address\"\n");
    assertThat(
            releaseError(
                head
                    + "{\"kind\":\"duplicate\"},{\"kind\":\"orphan\",\"address\":\"a/b\","
                    + "\"reason\":\"gone\"}]}"))
        .endsWith(": problems[1]: \"reason\" must be pod, block or node, not gone\n");
    assertThat(
            releaseError(head + "{\"kind\":\"orphan\",\"address\":\"nons\",\"reason\":\"pod\"}]}"))
        .endsWith(": problems[0]: \"address\" must be namespace/name, not nons\n");
    assertThat(releaseError(head + "{\"ip\":\"10.0.0.1\"}]}"))
        .endsWith(": problems[0] has no \"kind\"\n");
  }

  @Test
  void aReportWithoutOrphansReleasesNothingWithoutACluster() throws Exception {
    Path file =
        write(
            "{\"pools\":[],\"clean\":false,\"problems\":[{\"kind\":\"stuck-block\",\"pool\":\"p\","
                + "\"block\":\"b\",\"node\":\"n\",\"detail\":\"d\"}]}");
    Run run = run("release", "--from-report", file.toString(), "--kubeconfig", "/nonexistent");
    assertThat(run.code()).isZero();
    assertThat(run.out())
        .contains("0 orphans named in " + file)
        .contains("(1 other problems of the report are left alone)")
        .endsWith("nothing to release\n");
  }

  @Test
  void anUnreadableKubeconfigIsNamed() {
    Run run = run("pools", "--kubeconfig", dir.resolve("nope").toString());
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("kubectl kipam pools: cannot read the kubeconfig " + dir.resolve("nope"))
        .hasLineCount(1);
  }

  private String releaseError(String report) throws Exception {
    Path file = write(report);
    Run run = run("release", "--from-report", file.toString());
    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).startsWith("kubectl kipam release: the report " + file).hasLineCount(1);
    return run.err();
  }

  private Path write(String text) throws Exception {
    Path file = Files.createTempFile(dir, "report", ".json");
    Files.writeString(file, text);
    return file;
  }
}
