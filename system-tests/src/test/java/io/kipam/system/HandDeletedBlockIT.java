package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.SeededRandom;
import io.kipam.system.harness.SystemTest;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A node's block deleted by hand, its finalizer taken off, while its pods run: the slot is
 * unclaimed again, and the next node to claim it must not hand out the addresses those pods hold
 * (their IPAddresses carry the slot's block label but no block protects them). kipam-operator and
 * two kipam-node daemons as processes, pods over three namespaces, a pool of two /28 slots: node A
 * fills part of one, its block goes, node B serves pods until the pool has nothing for it. A slot B
 * claims Exclusive (the default) keeps A's addresses taken; one B would claim Shared from birth
 * stays unclaimed while they exist. Once A's pods are deleted their addresses come free, and B
 * serves as many from the slot: exactly A's where it holds the slot, any where it left it
 * unclaimed. No address is held twice at any step.
 *
 * <p>Seeded ({@code -Dkipam.seed=N}): how many pods A has, the order they go in, and whether B may
 * claim slots Shared from birth.
 */
class HandDeletedBlockIT {

  private static final Duration WITHIN = Duration.ofSeconds(90);
  private static final AtomicInteger SUBNETS = new AtomicInteger();

  private final KubernetesClient client = ControlPlane.shared().client();
  private final SeededRandom random = new SeededRandom();
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("handblock");

  @Test
  void theNextHolderOfASlotWhoseBlockWasDeletedByHandHandsOutNoneOfItsAddresses() throws Exception {
    int held = 2 + random.nextInt(9);
    boolean shareFromBirth = random.nextBoolean();
    System.out.printf(
        "HandDeletedBlockIT seed %d: node A holds %d addresses; node B %s%n",
        random.seed(),
        held,
        shareFromBirth ? "may claim slots Shared from birth" : "claims Exclusive");
    String pool = Fixtures.uniqueName("handblock");
    Cluster.poolReadiedByOperator(
        client, pool, Cluster.spec("10.236." + SUBNETS.incrementAndGet() + ".0/27", 28, 0));
    NodeRig a = processes.node(pool, Map.of());
    Map<Integer, String> left = new HashMap<>();
    for (int i = 0; i < held; i++) {
      CniCall.Outcome added = a.add(pool, i);
      assertThat(added.ok()).as(added.stdout()).isTrue();
      left.put(i, added.ip());
    }
    IPBlock block = a.blocks(pool).get(0);
    String name = block.getMetadata().getName();
    client.resource(block).withGracePeriod(0).delete();
    client
        .resources(IPBlock.class)
        .withName(name)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
    await()
        .atMost(WITHIN)
        .until(() -> client.resources(IPBlock.class).withName(name).get() == null);
    System.out.printf("block %s deleted by hand; its pods hold %s%n", name, left.values());

    NodeRig b =
        processes.node(
            pool, shareFromBirth ? Map.of("KIPAM_SHARED_SLOTS", "true") : Map.<String, String>of());
    List<String> served = serveUntilShort(b, pool, 0);
    assertThat(served).as("B's addresses").doesNotContainAnyElementsOf(left.values());
    System.out.printf("B served %d pods while A's pods run: %s%n", served.size(), served);

    List<Integer> pods = new ArrayList<>(left.keySet());
    java.util.Collections.shuffle(pods, random);
    for (int i : pods) {
      a.deletePod(i);
    }
    System.out.printf("A's pods deleted, in the order %s%n", pods);
    // Their addresses come back to B: read again every 10 s, or the slot claimed once empty.
    List<String> more = new ArrayList<>();
    for (int i = 0; i < held; i++) {
      CniCall.Outcome added = b.addRetried(List.of(pool), served.size() + i, WITHIN);
      assertOneHolderEach(pool);
      assertThat(added.ok()).as(added.stdout()).isTrue();
      more.add(added.ip());
    }
    System.out.printf("then B served %s%n", more);
    Cidr slot = Cidr.parse(block.getSpec().getCidr());
    assertThat(more).as("B's addresses once A's pods are gone").doesNotHaveDuplicates();
    if (served.stream().anyMatch(ip -> slot.contains(IpAddress.parse(ip)))) {
      // B holds the slot: the rest of it it served already, so what comes free is A's.
      assertThat(more).containsExactlyInAnyOrderElementsOf(left.values());
    } else {
      // B left the slot unclaimed while A's addresses were in it; now empty, any of it is free.
      assertThat(more).allMatch(ip -> slot.contains(IpAddress.parse(ip)));
    }
  }

  /** ADDs on {@code rig} from pod {@code first} on until one fails; the addresses served. */
  private List<String> serveUntilShort(NodeRig rig, String pool, int first) {
    List<String> served = new ArrayList<>();
    for (int i = first; ; i++) {
      CniCall.Outcome added = rig.add(pool, i);
      assertOneHolderEach(pool);
      if (!added.ok()) {
        System.out.printf("B has no address for pod %d: %s%n", i, added.stdout());
        return served;
      }
      served.add(added.ip());
    }
  }

  private void assertOneHolderEach(String pool) {
    Map<String, String> holders = new HashMap<>();
    for (IPAddress address : Cluster.addresses(client, pool)) {
      String holder = address.getMetadata().getNamespace() + "/" + address.getMetadata().getName();
      String previous = holders.put(address.getSpec().getIp(), holder);
      assertThat(previous)
          .as("%s held by %s and by %s", address.getSpec().getIp(), previous, holder)
          .isNull();
    }
  }
}
