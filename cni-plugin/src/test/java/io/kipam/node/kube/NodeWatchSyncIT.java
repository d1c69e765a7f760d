package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Ledger;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.RequestLog;
import io.kipam.testing.WithControlPlane;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The reads kipam-node marks itself synced on (design 4.2) are consistent reads. A list with {@code
 * resourceVersion=0} is served from the API server's watch cache at any staleness: a cache that
 * lags (a busy API server, one just restarted, one of several behind a load balancer) leaves out
 * the newest IPAddresses, and a daemon restarted a second after it wrote one hands that address out
 * again, to a pod of another namespace, before its watch catches up.
 */
@WithControlPlane
class NodeWatchSyncIT {

  private final KubernetesClient admin;

  NodeWatchSyncIT(KubernetesClient client) {
    this.admin = client;
  }

  @BeforeAll
  static void crds(KubernetesClient client) {
    KipamCrds.install(client);
  }

  @Test
  void theListsThatSyncTheNodeAreConsistentReadsAndHoldEveryAddressWrittenJustBefore() {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    Random random = new Random(seed);
    String node = Fixtures.uniqueName("sync-node");
    String pool = Fixtures.uniqueName("sync");
    Cidr block = Cidr.parse("10.249.0.0/28");
    admin.resource(block(pool, block, node)).create();
    List<String> namespaces = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      namespaces.add(Fixtures.namespace(admin, "sync" + i));
    }
    // Addresses written a moment before the node starts, in an order drawn from the seed, as a
    // daemon killed right after its last ADD leaves them.
    List<Integer> hosts = new ArrayList<>(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9));
    Collections.shuffle(hosts, random);
    List<String> written = new ArrayList<>();
    for (int host : hosts) {
      String namespace = namespaces.get(random.nextInt(namespaces.size()));
      IpAddress ip = IpAddress.parse("10.249.0." + host);
      admin.resource(address(pool, block, node, namespace, ip)).create();
      written.add(ip.toString());
    }
    System.out.printf("seed %d: wrote %s over %s%n", seed, written, namespaces);

    RequestLog log = new RequestLog();
    Ledger ledger = new Ledger(node, Clock.systemUTC());
    try (KubernetesClient client = log.client(ControlPlane.shared().adminConfig());
        NodeWatch watch =
            new NodeWatch(client, node, ledger, false, new ApiTraffic(new PrometheusRegistry()))) {
      watch.start(Duration.ofSeconds(5));

      assertThat(ledger.leases().stream().map(Lease::ip).map(IpAddress::toString))
          .as("every address written before the start is known once synced")
          .containsExactlyInAnyOrderElementsOf(written);
      List<RequestLog.Request> requests = log.take();
      for (String resource : List.of("ipaddresses", "ipblocks", "ippools", "pods")) {
        List<String> lists =
            requests.stream()
                .filter(r -> r.verb().equals("LIST") && r.resource().equals(resource))
                .map(RequestLog.Request::query)
                .toList();
        System.out.printf("lists of %s at the start: %s%n", resource, lists);
        assertThat(lists).as("lists of %s", resource).isNotEmpty();
        assertThat(lists)
            .as(
                "lists of %s that sync the node: consistent reads, never resourceVersion=0"
                    + " (any staleness)",
                resource)
            .noneMatch(query -> query.matches("(^|.*&)resourceVersion=0(&.*|$)"));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static IPBlock block(String pool, Cidr cidr, String node) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, cidr))
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, pool,
                    ApiConstants.LABEL_NODE, node,
                    ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(cidr)))
            .build());
    block.setSpec(new IPBlockSpec(pool, cidr.toString(), node));
    return block;
  }

  private static IPAddress address(
      String pool, Cidr block, String node, String namespace, IpAddress ip) {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.addressName(pool, ip))
            .withNamespace(namespace)
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, pool,
                    ApiConstants.LABEL_NODE, node,
                    ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block)))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(ip.toString());
    spec.setPool(pool);
    spec.setBlock(ResourceNames.blockName(pool, block));
    spec.setNode(node);
    spec.setNetwork("kipam-test");
    String pod = "p-" + ip.toString().replace('.', '-');
    spec.setPod(new PodReference(pod, UUID.randomUUID().toString()));
    spec.setContainerID("c-" + pod);
    spec.setInterfaceName("eth0");
    address.setSpec(spec);
    return address;
  }
}
