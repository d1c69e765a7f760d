package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.node.kube.NodeSummary;
import io.kipam.node.kube.PodSummary;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The daemon's client maps only the kinds it uses; every kind a watch of it can deliver must come
 * out as its class, or the watch misreads it. An API server restart is when it matters: the
 * watches' error events (410 Gone, a Status) must read as a Status so the watch lists again.
 */
class NodeDaemonSerializationTest {

  private final KubernetesSerialization json = NodeDaemon.serialization();

  private Object objectOf(String event) {
    return json.unmarshal(event, WatchEvent.class).getObject();
  }

  @Test
  void aWatchsExpiredErrorReadsAsAStatusWithItsCode() {
    Object object =
        objectOf(
            """
            {"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Failure","message":"too old resource version: 2943 (2964)",
             "reason":"Expired","code":410}}
            """);
    assertThat(object).isInstanceOf(Status.class);
    assertThat(((Status) object).getCode()).isEqualTo(410);
  }

  @Test
  void everyKindTheDaemonWatchesOrWritesReadsAsItsOwnClass() {
    Map<String, Class<?>> kinds =
        Map.of(
            "\"apiVersion\":\"v1\",\"kind\":\"Pod\"", PodSummary.class,
            "\"apiVersion\":\"v1\",\"kind\":\"Node\"", NodeSummary.class,
            "\"apiVersion\":\"v1\",\"kind\":\"Event\"", Event.class,
            "\"apiVersion\":\"kipam.io/v1alpha1\",\"kind\":\"IPPool\"", IPPool.class,
            "\"apiVersion\":\"kipam.io/v1alpha1\",\"kind\":\"IPBlock\"", IPBlock.class,
            "\"apiVersion\":\"kipam.io/v1alpha1\",\"kind\":\"IPAddress\"", IPAddress.class);
    kinds.forEach(
        (header, type) ->
            assertThat(
                    objectOf(
                        "{\"type\":\"ADDED\",\"object\":{"
                            + header
                            + ",\"metadata\":{\"name\":\"x\"}}}"))
                .as(header)
                .isInstanceOf(type));
  }
}
