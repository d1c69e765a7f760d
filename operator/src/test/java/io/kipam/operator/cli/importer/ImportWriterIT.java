package io.kipam.operator.cli.importer;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.operator.cli.importer.ImportPlan.PlannedAddress;
import io.kipam.operator.cli.importer.ImportPlan.PlannedPool;
import io.kipam.operator.cli.importer.ImportPlan.PlannedSlot;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link ImportWriter} against the real control plane: it writes what its plan says is missing, and
 * nothing the plan found present. An object found present and gone by the time the plan is written
 * (the IPAddress of a pod deleted meanwhile, removed by the garbage collector) stays gone: written
 * again, it would hold an address for a pod that no longer exists until the audit finds it. The
 * addresses go to several namespaces, which ones are present drawn from a printed seed.
 */
@WithControlPlane(crds = true)
class ImportWriterIT {

  private final KubernetesClient client = ControlPlane.shared().client();

  @Test
  void writesWhatThePlanFoundMissingAndNothingItFoundPresent() {
    long seed = new Random().nextLong();
    System.out.println("seed " + seed + " (which addresses the plan found present)");
    Random random = new Random(seed);
    List<String> namespaces = new ArrayList<>();
    for (String team : List.of("team-a", "team-b", "team-c")) {
      namespaces.add(Fixtures.namespace(client, team));
    }
    String node = Fixtures.uniqueName("worker");
    Fixtures.registerNode(client, node);
    String pool = Fixtures.uniqueName("wb");
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.91.0.0/24");
    spec.setBlockSize(28);
    spec.setNetwork(Fixtures.uniqueName("net"));
    Cidr slotCidr = Cidr.parse("10.91.0.0/28");
    String slot = ResourceNames.blockName(pool, slotCidr);

    // Six addresses over the namespaces; the plan found some present (their pods' IPAddresses
    // existed when it read), and those pods are gone since, with their IPAddresses.
    List<PlannedAddress> addresses = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    List<String> presentThenGone = new ArrayList<>();
    List<Boolean> present = new ArrayList<>(List.of(true, true, false, false, false, false));
    Collections.shuffle(present, random);
    for (int i = 0; i < 6; i++) {
      String ns = namespaces.get(i % namespaces.size());
      String ip = "10.91.0." + (1 + i);
      String name = ResourceNames.addressName(pool, IpAddress.parse(ip));
      addresses.add(
          new PlannedAddress(
              pool,
              ip,
              ns,
              name,
              "wb-" + i,
              UUID.randomUUID().toString(),
              node,
              "c-" + i,
              "net1",
              spec.getNetwork(),
              slot,
              slot,
              slotCidr.toString(),
              false,
              present.get(i)));
      (present.get(i) ? presentThenGone : missing).add(ns + "/" + name);
    }
    ImportPlan plan =
        new ImportPlan(
            List.of(new PlannedPool(pool, spec, "10.91.0.0-24", List.of(), false)),
            List.of(new PlannedSlot(pool, slot, slotCidr.toString(), node, 6, false)),
            addresses,
            List.of(),
            List.of());

    ImportWriter.Outcome outcome = new ImportWriter(client).write(plan);

    List<String> written =
        client.resources(IPAddress.class).inAnyNamespace().list().getItems().stream()
            .filter(a -> pool.equals(a.getSpec().getPool()))
            .map(a -> a.getMetadata().getNamespace() + "/" + a.getMetadata().getName())
            .toList();
    System.out.printf(
        "plan: %d to create, %d present; written: %d created, %d already there, %s conflicts%n",
        plan.toCreate(), 2, outcome.created(), outcome.present(), outcome.conflicts());
    assertThat(written).as("IPAddresses of the pool").containsExactlyInAnyOrderElementsOf(missing);
    assertThat(written).doesNotContainAnyElementsOf(presentThenGone);
    assertThat(outcome.created()).isEqualTo(plan.toCreate());
    assertThat(outcome.present()).isEqualTo(2);
    assertThat(outcome.conflicts()).isEmpty();
  }
}
