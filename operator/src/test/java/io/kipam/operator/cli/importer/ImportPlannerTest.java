package io.kipam.operator.cli.importer;

import static io.kipam.operator.cli.importer.WhereaboutsObjects.network;
import static io.kipam.operator.cli.importer.WhereaboutsObjects.rangePool;
import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.cli.importer.ImportPlan.PlannedAddress;
import io.kipam.operator.cli.importer.WhereaboutsState.Allocation;
import io.kipam.operator.cli.importer.WhereaboutsState.LivePod;
import io.kipam.operator.cli.importer.WhereaboutsState.Pool;
import io.kipam.operator.cli.importer.WhereaboutsState.Reservation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ImportPlannerTest {

  private static final WhereaboutsNetwork RED =
      network(
          "a/red",
          "{\"name\":\"red\",\"ipam\":{\"type\":\"whereabouts\",\"range\":\"10.70.0.0/24\","
              + "\"exclude\":[\"10.70.0.64/28\"]}}");
  private static final WhereaboutsNetwork BLUE =
      network(
          "b/blue",
          "{\"name\":\"blue\",\"ipam\":{\"type\":\"whereabouts\",\"range\":\"10.70.0.0/25\","
              + "\"network_name\":\"blue\"}}");

  private final Map<String, LivePod> pods = new HashMap<>();

  private LivePod pod(String ns, String name, String node) {
    LivePod pod = new LivePod(ns, name, "uid-" + ns + "-" + name, node, "Running", false);
    pods.put(ns + "/" + name, pod);
    return pod;
  }

  private WhereaboutsState state(
      List<WhereaboutsNetwork> networks, List<Pool> pools, Map<String, IPBlock> blocks) {
    return WhereaboutsObjects.state(networks, pools, pods, blocks);
  }

  @Test
  void oneSlotPerNodeIsExclusiveAndASlotSpanningNodesIsShared() {
    pod("a", "p1", "node-1");
    pod("a", "p2", "node-1");
    pod("c", "p3", "node-2");
    pod("a", "p4", "node-3");
    Pool red =
        rangePool(
            new Allocation("1", "c1", "a/p1", "net1"),
            new Allocation("2", "c2", "a/p2", "net1"),
            new Allocation("17", "c3", "c/p3", "net1"),
            new Allocation("18", "c4", "a/p4", "net2"),
            new Allocation("3", "c5", "a/gone", "net1"));
    ImportPlan plan = ImportPlanner.plan(state(List.of(RED, BLUE), List.of(red), Map.of()));

    assertThat(plan.problems()).isEmpty();
    assertThat(plan.pools())
        .extracting(p -> p.name() + " " + p.spec().getCidr() + " " + p.spec().getNetwork())
        .containsExactly(
            "wb-10-70-0-0-24 10.70.0.0/24 null", "wb-blue-10-70-0-0-25 10.70.0.0/25 blue");
    assertThat(plan.pools().get(0).spec().getExclude()).containsExactly("10.70.0.64/28");
    assertThat(plan.pools().get(0).spec().getBlockSize()).isEqualTo(28);
    assertThat(plan.slots())
        .extracting(s -> s.name() + " " + (s.shared() ? "Shared" : s.node()) + " " + s.addresses())
        .containsExactly(
            "wb-10-70-0-0-24.10-70-0-0-28 node-1 2", "wb-10-70-0-0-24.10-70-0-16-28 Shared 2");
    PlannedAddress p3 =
        plan.addresses().stream()
            .filter(a -> a.ip().equals("10.70.0.17"))
            .findFirst()
            .orElseThrow();
    assertThat(p3.namespace()).isEqualTo("c");
    assertThat(p3.subClaim()).isTrue();
    assertThat(p3.block()).isEqualTo("wb-10-70-0-0-24.10-70-0-17-32");
    assertThat(p3.slot()).isEqualTo("wb-10-70-0-0-24.10-70-0-16-28");
    assertThat(p3.podUid()).isEqualTo("uid-c-p3");
    assertThat(p3.node()).isEqualTo("node-2");
    assertThat(p3.network()).isEqualTo("red");
    PlannedAddress p1 =
        plan.addresses().stream().filter(a -> a.ip().equals("10.70.0.1")).findFirst().orElseThrow();
    assertThat(p1.subClaim()).isFalse();
    assertThat(p1.block()).isEqualTo("wb-10-70-0-0-24.10-70-0-0-28");
    assertThat(plan.leaked())
        .singleElement()
        .satisfies(
            l -> {
              assertThat(l.ip()).isEqualTo("10.70.0.3");
              assertThat(l.podRef()).isEqualTo("a/gone");
              assertThat(l.why()).isEqualTo("the pod does not exist");
            });
    assertThat(plan.toCreate()).as("pools, slots, addresses, sub-claims").isEqualTo(2 + 2 + 4 + 2);
  }

  @Test
  void finishedPodsAndReservationsOfGonePodsAreLeaked() {
    pods.put("a/done", new LivePod("a", "done", "u", "node-1", "Succeeded", true));
    pod("a", "live", "node-1");
    Pool red =
        rangePool(
            new Allocation("5", "c", "a/done", "net1"), new Allocation("6", "c", "a/live", "net1"));
    var state =
        new WhereaboutsState(
            List.of(RED),
            List.of(),
            List.of(),
            List.of(red),
            List.of(
                new Reservation("kube-system", "10.70.0.9", "c9", "a/ghost", "net1"),
                new Reservation("kube-system", "10.70.0.5", "c", "a/done", "net1"),
                new Reservation("kube-system", "10.70.0.6", "c", "a/live", "net1"),
                new Reservation("kube-system", "10.70.0.7", "c", "a/live", "net1")),
            pods,
            Map.of(),
            Map.of(),
            Map.of());
    ImportPlan plan = ImportPlanner.plan(state);
    assertThat(plan.leaked())
        .extracting(ImportPlan.Leaked::ip)
        .containsExactly("10.70.0.5", "10.70.0.9");
    assertThat(plan.addresses()).extracting(PlannedAddress::ip).containsExactly("10.70.0.6");
    assertOneProblem(
        plan,
        "OverlappingRangeIPReservation kube-system/10.70.0.7 spec.podref",
        "no importable whereabouts IPPool allocation carries it");
  }

  @Test
  void overlappingRangesOfOneNetworkAreReportedNotImported() {
    WhereaboutsNetwork wide =
        network(
            "a/wide",
            "{\"name\":\"wide\",\"ipam\":{\"type\":\"whereabouts\",\"range\":\"10.70.0.0/23\"}}");
    ImportPlan plan = ImportPlanner.plan(state(List.of(RED, wide), List.of(), Map.of()));
    assertThat(plan.pools()).isEmpty();
    assertThat(plan.problems()).hasSize(2);
    assertThat(plan.problems().get(0).toString())
        .contains("spec.range")
        .contains("give one network a network_name");
  }

  @Test
  void anExistingSlotKeepsItsModeAndAnotherNodesExclusiveSlotIsAConflict() {
    pod("a", "p1", "node-1");
    pod("a", "p2", "node-2");
    Pool red =
        rangePool(
            new Allocation("1", "c1", "a/p1", "net1"), new Allocation("33", "c2", "a/p2", ""));
    Map<String, IPBlock> blocks = new HashMap<>();
    blocks.put("wb-10-70-0-0-24.10-70-0-0-28", slot("10.70.0.0/28", null)); // Shared
    blocks.put("wb-10-70-0-0-24.10-70-0-32-28", slot("10.70.0.32/28", "node-9"));
    ImportPlan plan = ImportPlanner.plan(state(List.of(RED), List.of(red), blocks));
    assertThat(plan.slots())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.shared()).isTrue();
              assertThat(s.present()).isTrue();
            });
    assertThat(plan.addresses()).extracting(PlannedAddress::ip).containsExactly("10.70.0.1");
    assertOneProblem(
        plan, "IPBlock wb-10-70-0-0-24.10-70-0-32-28 spec.node", "held Exclusive by node node-9");
  }

  @Test
  void anAllocationOutsideTheRangeIsAProblem() {
    pod("a", "p1", "node-1");
    Pool red = rangePool(new Allocation("70", "c1", "a/p1", "net1"));
    ImportPlan plan = ImportPlanner.plan(state(List.of(RED), List.of(red), Map.of()));
    assertThat(plan.addresses()).isEmpty();
    assertOneProblem(
        plan, "spec.allocations[70]", "10.70.0.70 of pod a/p1 is excluded (10.70.0.64/28)");
  }

  @Test
  void afterTheSwitchAnAllocationWhereaboutsMadeMeanwhileGoesIntoTheImportedPool() {
    pod("a", "p1", "node-1");
    pod("a", "late", "node-1");
    ImportPlan first =
        ImportPlanner.plan(
            state(
                List.of(RED),
                List.of(rangePool(new Allocation("1", "c1", "a/p1", "net1"))),
                Map.of()));
    IPPool imported = new IPPool();
    imported.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(first.pools().get(0).name())
            .build());
    imported.setSpec(first.pools().get(0).spec());
    // The NAD now names kipam; whereabouts gave one more address during the switch.
    var state =
        new WhereaboutsState(
            List.of(),
            List.of(new SwitchedNetwork("a/red", "red", List.of("wb-10-70-0-0-24"))),
            List.of(),
            List.of(
                rangePool(
                    new Allocation("1", "c1", "a/p1", "net1"),
                    new Allocation("2", "c2", "a/late", "net1"))),
            List.of(
                new Reservation("kube-system", "10.70.0.1", "c1", "a/p1", "net1"),
                new Reservation("kube-system", "10.70.0.2", "c2", "a/late", "net1")),
            pods,
            Map.of("wb-10-70-0-0-24", imported),
            Map.of(),
            Map.of());
    ImportPlan again = ImportPlanner.plan(state);
    assertThat(again.problems()).isEmpty();
    assertThat(again.pools()).singleElement().satisfies(p -> assertThat(p.present()).isTrue());
    assertThat(again.addresses())
        .extracting(a -> a.ip() + " " + a.network())
        .containsExactly("10.70.0.1 red", "10.70.0.2 red");
  }

  /** {@code plan} has one problem, and its text holds each of {@code parts}. */
  private static void assertOneProblem(ImportPlan plan, String... parts) {
    assertThat(plan.problems()).singleElement().asString().contains(parts);
  }

  private static IPBlock slot(String cidr, String node) {
    IPBlock block = new IPBlock();
    block.setSpec(new IPBlockSpec("wb-10-70-0-0-24", cidr, node));
    return block;
  }
}
