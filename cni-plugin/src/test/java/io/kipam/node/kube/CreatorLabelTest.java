package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.node.alloc.ClaimStore;
import io.kipam.runtime.client.TokenBucket;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The objects without spec.node that kipam-node creates name their creator in {@code
 * kipam.io/created-by} (admission admits them only so, and lets only that node delete a claim's
 * sub-claim); the objects with spec.node do not need it. The creates go to a small HTTP server that
 * records each object and answers it back as created.
 */
class CreatorLabelTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NODE = "node-7";

  private final List<ObjectNode> created = new ArrayList<>();
  private HttpServer server;
  private KubernetesClient client;
  private KubernetesStore store;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          ObjectNode body = (ObjectNode) JSON.readTree(exchange.getRequestBody().readAllBytes());
          ObjectNode answer;
          if ("POST".equals(exchange.getRequestMethod())) {
            created.add(body);
            answer = body.deepCopy();
            ((ObjectNode) answer.get("metadata")).put("uid", "uid-" + created.size());
          } else {
            answer =
                (ObjectNode) JSON.readTree(JSON.writeValueAsBytes(created.get(created.size() - 1)));
          }
          byte[] out = JSON.writeValueAsBytes(answer);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(
              "POST".equals(exchange.getRequestMethod()) ? 201 : 200, out.length);
          exchange.getResponseBody().write(out);
          exchange.close();
        });
    server.start();
    client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(Config.empty())
                    .withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort())
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build();
    store =
        new KubernetesStore(
            client,
            NODE,
            pool -> null,
            new TokenBucket(1000, 1000),
            () -> null,
            new ApiTraffic(new PrometheusRegistry()));
  }

  @AfterEach
  void stop() {
    client.close();
    server.stop(0);
  }

  @Test
  void aSlotSharedFromBirthNamesItsCreator() {
    assertThat(store.claimSharedSlot("pods", Cidr.parse("10.1.0.16/28"))).isEqualTo("uid-1");

    assertThat(labels(0)).containsEntry(ApiConstants.LABEL_CREATED_BY, NODE);
    assertThat(created.get(0).at("/spec/node").isMissingNode()).isTrue();
  }

  @Test
  void aClaimsSubClaimNamesItsCreator() {
    KubernetesClaims claims =
        new KubernetesClaims(client, store, new AddressEvents(client, NODE, Clock.systemUTC()));
    ClaimStore.Claim claim =
        new ClaimStore.Claim(
            "vms", "vm-a.pods", "claim-uid", "pods", "eth0", null, false, "1", List.of());

    claims.createClaimed("pods", IpAddress.parse("10.1.0.18"), Cidr.parse("10.1.0.16/28"), claim);

    assertThat(labels(0))
        .containsEntry(ApiConstants.LABEL_CREATED_BY, NODE)
        .containsEntry(ApiConstants.LABEL_CLAIM, "claim-uid")
        .doesNotContainKey(ApiConstants.LABEL_NODE);
  }

  @Test
  void aBlockOrSubClaimOfTheNodeNeedsNoCreator() {
    store.claimBlock("pods", Cidr.parse("10.1.0.0/28"), NODE);
    store.claimSubClaim("pods", IpAddress.parse("10.1.0.20"), NODE, Cidr.parse("10.1.0.16/28"));

    assertThat(labels(0)).doesNotContainKey(ApiConstants.LABEL_CREATED_BY);
    assertThat(labels(1)).doesNotContainKey(ApiConstants.LABEL_CREATED_BY);
  }

  private Map<String, String> labels(int i) {
    Map<String, String> labels = new HashMap<>();
    created
        .get(i)
        .at("/metadata/labels")
        .fields()
        .forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
    return labels;
  }
}
