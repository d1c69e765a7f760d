package io.kipam.operator.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportWriterTest {

  private static final CheckReport CLEAN =
      new CheckReport(
          3, 1, List.of(new CheckReport.PoolRow("pods", "", "254", 3, 0, 0, 0)), List.of());

  private static final CheckReport PROBLEMS =
      new CheckReport(
          5,
          2,
          List.of(new CheckReport.PoolRow("pods", "net-a", "65534", 4, 1, 1, 1)),
          List.of(
              new CheckReport.Orphan(
                  "pods",
                  "a/pods.10-0-0-2",
                  "uid-2",
                  "10.0.0.2",
                  "pod",
                  "its Pod a/web (uid u1) does not exist"),
              new CheckReport.Duplicate(
                  "net-a",
                  "10.0.0.5",
                  List.of(
                      new CheckReport.Holder("a/pods.10-0-0-5", "pods"),
                      new CheckReport.Holder("b/pods.10-0-0-5", "pods"))),
              new CheckReport.StuckBlock(
                  "pods", "pods.10-0-0-0-28", "n9", "its Node n9 does not exist"),
              new CheckReport.UnknownPool("gone", "c/gone.10-9-0-1", "10.9.0.1")));

  @Test
  void aCleanReportHasAHeaderATableAndSaysNoProblemsFound() {
    String text = ReportWriter.text(CLEAN);

    assertThat(text)
        .isEqualTo(
            """
            kipam-operator check: 1 pool, 3 IPAddresses and 1 IPBlock read; nothing was changed

            POOL  NETWORK  CAPACITY  ALLOCATED  ORPHANS  DUPLICATES  STUCK BLOCKS
            pods  -        254       3          0        0           0

            no problems found
            """);
  }

  @Test
  void everyProblemIsListedUnderItsKindAndCounted() {
    String text = ReportWriter.text(PROBLEMS);

    assertThat(text)
        .contains("pods  net-a    65534     4          1        1           1")
        .contains(
            "Orphan candidates (orphaned now; the operator removes each after the grace period if"
                + " it stays so):\n"
                + "  a/pods.10-0-0-2  10.0.0.2  pool pods  its Pod a/web (uid u1) does not exist\n")
        .contains(
            "  10.0.0.5 (network net-a) is held by a/pods.10-0-0-5 (pool pods) and"
                + " b/pods.10-0-0-5 (pool pods)\n")
        .contains("Stuck blocks:\n  pods.10-0-0-0-28  pool pods  its Node n9 does not exist\n")
        .contains(
            "IPAddresses of pools that do not exist:\n  c/gone.10-9-0-1  10.9.0.1  pool gone\n")
        .endsWith("\n4 problems found\n");
  }

  @Test
  void jsonHasPoolsProblemsOfEveryKindAndClean() throws Exception {
    JsonNode json = new ObjectMapper().readTree(ReportWriter.json(PROBLEMS));

    assertThat(json.get("clean").asBoolean()).isFalse();
    JsonNode pool = json.get("pools").get(0);
    assertThat(pool.get("name").asText()).isEqualTo("pods");
    assertThat(pool.get("network").asText()).isEqualTo("net-a");
    assertThat(pool.get("capacity").asText()).isEqualTo("65534");
    assertThat(pool.get("allocated").asLong()).isEqualTo(4);
    assertThat(pool.get("orphans").asInt()).isEqualTo(1);
    assertThat(pool.get("duplicates").asInt()).isEqualTo(1);
    assertThat(pool.get("stuckBlocks").asInt()).isEqualTo(1);
    JsonNode problems = json.get("problems");
    assertThat(problems).hasSize(4);
    assertThat(problems.get(0).get("kind").asText()).isEqualTo("orphan");
    assertThat(problems.get(0).get("address").asText()).isEqualTo("a/pods.10-0-0-2");
    assertThat(problems.get(0).get("ip").asText()).isEqualTo("10.0.0.2");
    assertThat(problems.get(0).get("reason").asText()).isEqualTo("pod");
    assertThat(problems.get(1).get("kind").asText()).isEqualTo("duplicate");
    assertThat(problems.get(1).get("holders").get(1).get("address").asText())
        .isEqualTo("b/pods.10-0-0-5");
    assertThat(problems.get(2).get("kind").asText()).isEqualTo("stuck-block");
    assertThat(problems.get(2).get("node").asText()).isEqualTo("n9");
    assertThat(problems.get(3).get("kind").asText()).isEqualTo("unknown-pool");
    assertThat(problems.get(3).get("pool").asText()).isEqualTo("gone");
  }

  @Test
  void aCleanReportIsCleanInJson() throws Exception {
    JsonNode json = new ObjectMapper().readTree(ReportWriter.json(CLEAN));

    assertThat(json.get("clean").asBoolean()).isTrue();
    assertThat(json.get("problems")).isEmpty();
    assertThat(json.get("pools")).hasSize(1);
  }
}
