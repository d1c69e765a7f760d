package io.kipam.operator.cli.importer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.operator.cli.importer.WhereaboutsState.Allocation;
import io.kipam.operator.cli.importer.WhereaboutsState.LivePod;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlanTextTest {

  private static ImportPlan plan() {
    WhereaboutsNetwork red =
        WhereaboutsObjects.network(
            "a/red",
            "{\"name\":\"red\",\"ipam\":{\"type\":\"whereabouts\",\"range\":\"10.70.0.0/24\"}}");
    return ImportPlanner.plan(
        WhereaboutsObjects.state(
            List.of(red),
            List.of(
                WhereaboutsObjects.rangePool(
                    new Allocation("1", "c1", "a/p1", "net1"),
                    new Allocation("2", "c2", "a/p2", "net1"),
                    new Allocation("3", "c3", "a/gone", "net1"))),
            Map.of(
                "a/p1", new LivePod("a", "p1", "u1", "node-1", "Running", false),
                "a/p2", new LivePod("a", "p2", "u2", "node-2", "Pending", false)),
            Map.of()));
  }

  @Test
  void theTextNamesPoolsSlotsAddressesAndLeakedWithASummary() {
    String text = PlanText.text(plan());
    assertThat(text)
        .contains("wb-10-70-0-0-24              10.70.0.0/24")
        .contains("wb-10-70-0-0-24.10-70-0-0-28             Shared")
        .contains("a/wb-10-70-0-0-24.10-70-0-1")
        .contains("LEAKED")
        .contains("10.70.0.3        a/gone")
        .endsWith(
            "1 pools, 1 slots (0 Exclusive, 1 Shared), 2 addresses, 1 leaked, 0 problems;"
                + " 6 objects to create\n");
  }

  @Test
  void theJsonHasTheDocumentedFields() throws Exception {
    JsonNode json = new ObjectMapper().readTree(PlanText.json(plan(), true, null));
    assertThat(json.path("dryRun").asBoolean()).isTrue();
    assertThat(json.path("pools").get(0).path("spec").path("cidr").asText())
        .isEqualTo("10.70.0.0/24");
    assertThat(json.path("slots").get(0).path("shared").asBoolean()).isTrue();
    JsonNode address = json.path("addresses").get(0);
    assertThat(address.path("podUid").asText()).isEqualTo("u1");
    assertThat(address.path("subClaim").asBoolean()).isTrue();
    assertThat(json.path("leaked").get(0).path("podRef").asText()).isEqualTo("a/gone");
    assertThat(json.path("toCreate").asLong()).isEqualTo(6);
    assertThat(json.has("outcome")).isFalse();
  }
}
