package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.system.harness.ChurnAndSample;
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
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pool choice: a pod's annotation over its namespace's over the network configuration, family by
 * family; the next pool of a family when one is exhausted; refused, naming the annotation, for a
 * pool the namespace may not use, a pool of a family the network does not ask for, and a malformed
 * value. Three kipam-node processes and kipam-operator; ordinary pods churn in three namespaces
 * through another pool, and the chosen pools' IPAddresses are sampled for an address held twice.
 * Seeded ({@code -Dkipam.seed=N}): which node serves each case.
 */
class PoolChoiceIT {
  @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();

  private static final Duration RETRIES = Duration.ofSeconds(60);

  private final KubernetesClient client = ControlPlane.shared().client();
  private final KipamProcesses processes = SYSTEM.processesOfEachTest("choice");
  private List<NodeRig> rigs;
  private final SeededRandom random = new SeededRandom();
  private final List<ChurnAndSample> meanwhile = new ArrayList<>();
  private String tiny;
  private String big;
  private String alt;
  private String six;
  private String sixToo;
  private String fenced;
  private int pods;

  @BeforeEach
  void start() throws Exception {
    random.print("PoolChoiceIT");
    tiny = Cluster.readiedPool(client, "tiny", Cluster.spec("10.212.0.0/30", 30, 0));
    big = Cluster.readiedPool(client, "big", Cluster.spec("10.212.1.0/24", 28, 0));
    alt = Cluster.readiedPool(client, "alt", Cluster.spec("10.212.2.0/24", 28, 0));
    six = Cluster.readiedPool(client, "six", Cluster.spec("fd00:212::/120", 124, 0));
    sixToo = Cluster.readiedPool(client, "sixtoo", Cluster.spec("fd00:213::/120", 124, 0));
    IPPoolSpec fencedSpec = Cluster.spec("10.212.3.0/24", 28, 0);
    fencedSpec.setNamespaceSelector(Cluster.matchLabel("team", "fenced"));
    fenced = Cluster.readiedPool(client, "fenced", fencedSpec);
    String churn = Cluster.readiedPool(client, "churn", Cluster.spec("10.212.8.0/24", 28, 0));
    rigs = processes.nodes(churn, 3, Map.of());
    meanwhile.add(ChurnAndSample.start(client, churn, rigs));
    for (String pool : List.of(tiny, big, alt, six, sixToo)) {
      meanwhile.add(ChurnAndSample.start(client, pool, List.of()));
    }
  }

  @AfterEach
  void stopAll() throws Exception {
    if (!meanwhile.isEmpty()) {
      meanwhile
          .get(0)
          .closeAndCheck(
              "PoolChoiceIT",
              meanwhile.subList(1, meanwhile.size()).toArray(ChurnAndSample[]::new));
    }
  }

  @Test
  void podOverNamespaceOverConfigurationFamilyByFamilyWithFallback() throws Exception {
    String plain = Fixtures.namespace(client, "plain");
    String annotated = annotatedNamespace("alt-ns", Map.of(ApiConstants.ANNOTATION_POOLS, alt));
    String v4Only =
        annotatedNamespace(
            "big-ns", Map.of(ApiConstants.ANNOTATION_IPV4_POOLS, "[\"" + big + "\"]"));

    // The configuration's order: tiny first, big once tiny is exhausted.
    NodeRig one = rig();
    List<String> fromConfig = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      fromConfig.add(add(one, pod(one, plain, Map.of()), List.of(tiny, big)).ips().get(0));
    }
    assertThat(fromConfig.subList(0, 2)).allMatch(ip -> in(ip, "10.212.0.0/30"));
    assertThat(fromConfig.get(2))
        .as("tiny is exhausted: the next pool")
        .matches(ip -> in(ip, "10.212.1.0/24"));

    // The namespace's annotation over the configuration, the pod's over the namespace's.
    NodeRig n = rig();
    assertThat(add(n, pod(n, annotated, Map.of()), List.of(tiny, big)).ips().get(0))
        .matches(ip -> in(ip, "10.212.2.0/24"));
    NodeRig r = rig();
    Pod chosen = pod(r, annotated, Map.of(ApiConstants.ANNOTATION_POOLS, big));
    assertThat(add(r, chosen, List.of(tiny, big)).ips().get(0))
        .matches(ip -> in(ip, "10.212.1.0/24"));
    // DEL finds the address in the pool the annotation chose.
    assertThat(call(r, "DEL", chosen, List.of(tiny, big)).ok()).isTrue();
    assertThat(Cluster.addressesOf(client, chosen)).isEmpty();

    // Family by family: IPv4 from the namespace (big), IPv6 from the pod (sixtoo).
    NodeRig d = rig();
    Pod dual = pod(d, v4Only, Map.of(ApiConstants.ANNOTATION_IPV6_POOLS, sixToo));
    List<String> both = add(d, dual, List.of(alt, six)).ips();
    assertThat(both).hasSize(2);
    assertThat(both.get(0)).matches(ip -> in(ip, "10.212.1.0/24"));
    assertThat(both.get(1)).matches(ip -> in(ip, "fd00:213::/120"));
    System.out.println(
        "configuration order " + fromConfig + "; family by family " + both + " on " + d.node);
  }

  @Test
  void anAnnotationIsRefusedNamingItForAPoolTheNamespaceMayNotUseAndForBadValues()
      throws Exception {
    String plain = Fixtures.namespace(client, "refused");
    NodeRig r = rig();
    assertRefused(
        r,
        pod(r, plain, Map.of(ApiConstants.ANNOTATION_POOLS, fenced)),
        List.of(big),
        "\"code\":101,",
        "annotation kipam.io/pools of pod " + plain + "/",
        "names pool " + fenced,
        "namespaceSelector");
    assertRefused(
        r,
        pod(r, plain, Map.of(ApiConstants.ANNOTATION_POOLS, six)),
        List.of(big),
        "\"code\":7,",
        "names IPv6 pool " + six,
        "asks for no IPv6 address");
    assertRefused(
        r,
        pod(r, plain, Map.of(ApiConstants.ANNOTATION_IPV4_POOLS, six)),
        List.of(big, six),
        "\"code\":7,",
        "annotation kipam.io/ipv4-pools",
        "names IPv6 pool " + six + " among its IPv4 pools");
    assertRefused(
        r,
        pod(r, plain, Map.of(ApiConstants.ANNOTATION_POOLS, big + ",," + alt)),
        List.of(big),
        "\"code\":7,",
        "annotation kipam.io/pools of pod",
        "which is no pool name: '" + big + ",," + alt + "'");
    assertRefused(
        r,
        pod(r, plain, Map.of(ApiConstants.ANNOTATION_POOLS, "[\"" + big + "\", 7]")),
        List.of(big),
        "\"code\":7,",
        "is not a JSON list of pool names");
    String fencedNs =
        annotatedNamespace("fenced-ns", Map.of(ApiConstants.ANNOTATION_POOLS, fenced));
    assertRefused(
        r,
        pod(r, fencedNs, Map.of()),
        List.of(big),
        "\"code\":101,",
        "annotation kipam.io/pools of namespace " + fencedNs,
        "namespaceSelector");
  }

  private void assertRefused(NodeRig rig, Pod pod, List<String> pools, String... fragments) {
    CniCall.Outcome outcome = call(rig, "ADD", pod, pools);
    assertThat(outcome.ok()).as(outcome.stdout()).isFalse();
    for (String fragment : fragments) {
      assertThat(outcome.stdout()).contains(fragment);
    }
    assertThat(Cluster.addressesOf(client, pod)).as("nothing allocated").isEmpty();
  }

  private NodeRig rig() {
    return rigs.get(random.nextInt(rigs.size()));
  }

  private String annotatedNamespace(String prefix, Map<String, String> annotations) {
    String ns = Fixtures.namespace(client, prefix);
    client
        .namespaces()
        .withName(ns)
        .edit(
            n -> {
              n.getMetadata().setAnnotations(new java.util.HashMap<>(annotations));
              return n;
            });
    return ns;
  }

  private Pod pod(NodeRig rig, String namespace, Map<String, String> annotations) {
    return client
        .pods()
        .inNamespace(namespace)
        .resource(
            Cluster.podOn("choice-" + (pods++), rig.node)
                .editMetadata()
                .withAnnotations(annotations)
                .endMetadata()
                .build())
        .create();
  }

  private CniCall.Outcome add(NodeRig rig, Pod pod, List<String> pools) {
    return CniCall.whileTryAgain(() -> call(rig, "ADD", pod, pools), RETRIES);
  }

  private CniCall.Outcome call(NodeRig rig, String command, Pod pod, List<String> pools) {
    return CniCall.run(
        rig.kipam,
        CniCall.env(command, "c-" + pod.getMetadata().getUid(), pod),
        Cluster.config("1.1.0", rig.daemon.socket.toString(), pools.toArray(String[]::new)));
  }

  private static boolean in(String ip, String cidr) {
    return Cidr.parse(cidr).contains(IpAddress.parse(ip));
  }
}
