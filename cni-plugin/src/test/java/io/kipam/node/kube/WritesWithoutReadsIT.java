package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.cni.spec.Attachment;
import io.kipam.node.alloc.BlockObject;
import io.kipam.node.alloc.BlockRef;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.PodRef;
import io.kipam.runtime.client.TokenBucket;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.RequestLog;
import io.kipam.testing.WithControlPlane;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What kipam-node's writes cost the API server, request by request: an ADD is one create, a DEL a
 * delete and the finalizer's removal, a block's count one status patch. No read goes with them:
 * fabric8 reads an object afresh before it sends a patch of a bare name, a GET per write that would
 * double a block's status writes and add a third request to every DEL on every node.
 */
@WithControlPlane
class WritesWithoutReadsIT {

  private final KubernetesClient admin;

  WritesWithoutReadsIT(KubernetesClient client) {
    this.admin = client;
  }

  @BeforeAll
  static void crds(KubernetesClient client) {
    KipamCrds.install(client);
  }

  @Test
  void anAddIsOneCreateADelADeleteAndAPatchABlockCountOnePatch() {
    String node = Fixtures.uniqueName("writes-node");
    String pool = Fixtures.uniqueName("writes");
    Cidr slot = Cidr.parse("10.248.0.0/28");
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, slot))
            .withLabels(Map.of(ApiConstants.LABEL_POOL, pool, ApiConstants.LABEL_NODE, node))
            .build());
    block.setSpec(new IPBlockSpec(pool, slot.toString(), node));
    block = admin.resource(block).create();
    String namespace = Fixtures.namespace(admin, "writes");

    RequestLog log = new RequestLog();
    try (KubernetesClient client = log.client(ControlPlane.shared().adminConfig())) {
      TokenBucket limiter = new TokenBucket(100, 100);
      KubernetesStore store =
          new KubernetesStore(
              client,
              node,
              p -> null,
              limiter,
              () -> null,
              new ApiTraffic(new PrometheusRegistry()));
      Lease wanted =
          new Lease(
              pool,
              IpAddress.parse("10.248.0.5"),
              slot,
              node,
              "kipam-test",
              new Attachment("c-" + UUID.randomUUID(), "eth0"),
              new PodRef(namespace, "p", UUID.randomUUID().toString()),
              null,
              null);
      Lease written = store.createAddress(wanted);
      List<String> add = taken(log);
      store.deleteAddress(written);
      List<String> del = taken(log);
      BlockRef ref = new BlockRef(pool, slot, block.getMetadata().getUid());
      KubernetesBlockStatus status = new KubernetesBlockStatus(client, limiter);
      boolean first =
          status.writeAllocated(
              new BlockObject(
                  ref, block.getMetadata().getResourceVersion(), false, null, null, null),
              1);
      boolean second = status.writeAllocated(new BlockObject(ref, null, true, null, null, 1L), 0);
      List<String> counts = taken(log);
      System.out.printf(
          "an ADD's requests: %s; a DEL's: %s; two block counts': %s%n", add, del, counts);

      assertThat(add).containsExactly("POST ipaddresses");
      assertThat(del).containsExactly("DELETE ipaddresses", "PATCH ipaddresses");
      assertThat(admin.resources(IPAddress.class).inNamespace(namespace).list().getItems())
          .as("the DEL left nothing")
          .isEmpty();
      assertThat(first && second).as("both counts written").isTrue();
      assertThat(counts).containsExactly("PATCH ipblocks/status", "PATCH ipblocks/status");
    }
  }

  private static List<String> taken(RequestLog log) {
    return log.take().stream().map(RequestLog.Request::toString).toList();
  }
}
