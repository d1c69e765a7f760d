package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.TestAddresses;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.ControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.TestInstance;

/**
 * What the tests of one node's credentials against another node's objects share: kipam installed
 * for three Nodes whose roles (attacker, attacked, third) are drawn from a printed seed, with a
 * client on each Node's token; the wait until kipam's admission policies refuse a forged write; the
 * writes a daemon makes besides creates; and the removal of what such a test made. A subclass still
 * declares {@code @WithControlPlane} itself; the static helpers serve any test of this package.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class NodeAttacks {

  private final String pool;

  final ControlPlane controlPlane = ControlPlane.shared();
  final KubernetesClient admin = controlPlane.client();
  private final List<KubernetesClient> opened = new ArrayList<>();
  final long seed = Long.getLong("kipam.seed", System.nanoTime());
  final Random random = new Random(seed);
  String attacker;
  String victim;
  String third;
  KubernetesClient attackerClient;
  KubernetesClient victimClient;
  KubernetesClient thirdClient;

  /** A test whose IPBlocks and IPAddresses are of {@code pool}. */
  NodeAttacks(String pool) {
    this.pool = pool;
  }

  /**
   * Prints the seed and the roles it draws among the Nodes of the pool, -n1, -n2 and -n3 (the
   * attacker writes with its token at the attacked Node's objects), installs kipam for them with
   * {@code namespaces}, opens a client on each Node's token, and waits until the policies refuse
   * the attacker's forged slot {@code probeNet}.254.0/28 and its sub-claim of {@code
   * probeNet}.255.3 under the attacked Node's slot {@code probeNet}.255.0/28, which stays.
   */
  void installForThreeNodes(List<String> namespaces, String probeNet) {
    printSeed(getClass().getSimpleName(), seed);
    List<String> nodes = new ArrayList<>(List.of(pool + "-n1", pool + "-n2", pool + "-n3"));
    Collections.shuffle(nodes, random);
    attacker = nodes.get(0);
    victim = nodes.get(1);
    third = nodes.get(2);
    System.out.println("attacker " + attacker + ", attacked " + victim + ", third " + third);
    KipamInstall.applyWith(controlPlane, nodes, namespaces);
    attackerClient = opened(KipamInstall.nodeClient(controlPlane, attacker));
    victimClient = opened(KipamInstall.nodeClient(controlPlane, victim));
    thirdClient = opened(KipamInstall.nodeClient(controlPlane, third));
    IPBlock probe = victimClient.resource(slot(probeNet + ".255.0/28", victim)).create();
    awaitPoliciesRefuse(
        attackerClient,
        attacker,
        slot(probeNet + ".254.0/28", victim),
        subClaim(probeNet + ".255.3", attacker, name(probe)));
  }

  /** Closes the clients this test opened and removes what it made (see {@link #removeAll}). */
  void closeAndRemove(List<String> namespaces, List<String> pools) {
    opened.forEach(KubernetesClient::close);
    removeAll(admin, namespaces, pools);
  }

  /** {@code client}, to be closed after the class's tests. */
  KubernetesClient opened(KubernetesClient client) {
    opened.add(client);
    return client;
  }

  /** The object as it is now: an edit of an older version would fail on its resourceVersion. */
  <T extends HasMetadata> T fresh(T object) {
    return admin.resource(object).get();
  }

  IPBlock slot(String cidr, String node) {
    return TestBlocks.slot(pool, cidr, node);
  }

  IPBlock protectedSlot(String cidr, String node) {
    return TestBlocks.protectedSlot(pool, cidr, node);
  }

  /** A slot Shared from birth as kipam-node of {@code creator} claims it. */
  IPBlock sharedFromBirth(String cidr, String creator) {
    return TestBlocks.sharedFromBirth(pool, cidr, creator);
  }

  IPBlock subClaim(String address, String node, String parent) {
    return TestBlocks.subClaim(pool, address, node, parent);
  }

  /**
   * {@code node}'s IPAddress of {@code ip} from {@code block}, labelled as its daemon labels it.
   */
  IPAddress address(String namespace, String ip, String node, String block) {
    return TestAddresses.address(pool, namespace, ip, node, block);
  }

  static String name(HasMetadata object) {
    return object.getMetadata().getName();
  }

  static <T extends HasMetadata> T relabelled(T object, String label, String value) {
    object.getMetadata().getLabels().put(label, value);
    return object;
  }

  static <T extends HasMetadata> T unlabelled(T object, String label) {
    object.getMetadata().getLabels().remove(label);
    return object;
  }

  /** Prints a test's seed the way every such test prints it, so that a run can be replayed. */
  static void printSeed(String test, long seed) {
    System.out.println(test + " seed " + seed + " (rerun with -Dkipam.seed=" + seed + ")");
  }

  /**
   * Waits until the attacker's forged slot and forged sub-claim are both refused: a policy takes
   * effect a moment after it is stored, and a policy with IPBlocks as parameters once
   * kube-apiserver's cache holds them.
   */
  static void awaitPoliciesRefuse(
      KubernetesClient attackerClient,
      String attacker,
      IPBlock forgedSlot,
      IPBlock forgedSubClaim) {
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () -> {
              assertThatThrownBy(() -> attackerClient.resource(forgedSlot).dryRun().create())
                  .hasMessageContaining("kipam-node of node " + attacker);
              assertThatThrownBy(() -> attackerClient.resource(forgedSubClaim).dryRun().create())
                  .hasMessageContaining("may not sub-claim");
            });
  }

  /** Merges {@code patch} into the status of {@code block}, written with {@code client}. */
  static void status(KubernetesClient client, IPBlock block, String patch) {
    client
        .resources(IPBlock.class)
        .withName(block.getMetadata().getName())
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
  }

  /** Annotates {@code node} as short of addresses in {@code pool}, written with {@code client}. */
  static void demand(KubernetesClient client, String node, String pool) {
    client
        .nodes()
        .withName(node)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"metadata\":{\"annotations\":{\"kipam.io/demand\":\"" + pool + "\"}}}");
  }

  static <T extends HasMetadata> T withoutFinalizers(T object) {
    object.getMetadata().setFinalizers(new ArrayList<>());
    return object;
  }

  /**
   * Removes the namespaces (with their IPAddresses) and the IPBlocks of the pools a test made,
   * their finalizers taken off first: no operator runs to take them off.
   */
  static void removeAll(KubernetesClient admin, List<String> namespaces, List<String> pools) {
    for (String namespace : namespaces) {
      for (IPAddress address :
          admin.resources(IPAddress.class).inNamespace(namespace).list().getItems()) {
        admin.resource(address).edit(NodeAttacks::withoutFinalizers);
      }
      admin.namespaces().withName(namespace).delete();
    }
    for (String pool : pools) {
      for (IPBlock block :
          admin.resources(IPBlock.class).withLabel("kipam.io/pool", pool).list().getItems()) {
        admin.resource(block).edit(NodeAttacks::withoutFinalizers);
        admin.resource(block).delete();
      }
    }
  }
}
