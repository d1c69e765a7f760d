package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.api.v1alpha1.IPAddress;
import org.junit.jupiter.api.Test;

/** What the node's caches keep of an object: what kipam-node reads, nothing else. */
class TrimmedStoreTest {

  private static final String POD =
      """
      {"apiVersion":"v1","kind":"Pod",
       "metadata":{"namespace":"team-a","name":"web-0","uid":"u1",
         "labels":{"app":"web"},"annotations":{"kubernetes.io/config.mirror":"m1"},
         "deletionTimestamp":"2026-01-01T00:00:00Z",
         "managedFields":[{"manager":"kubelet","operation":"Update"}]},
       "spec":{"nodeName":"n1","containers":[{"name":"web","image":"web:1",
         "env":[{"name":"A","value":"1"}],"readinessProbe":{"httpGet":{"port":8080}}}],
         "volumes":[{"name":"data","emptyDir":{}}]},
       "status":{"phase":"Running","podIP":"10.0.0.5","conditions":[{"type":"Ready"}]}}
      """;

  private static final String NODE =
      """
      {"apiVersion":"v1","kind":"Node",
       "metadata":{"name":"n1","uid":"u2","labels":{"zone":"a"},
         "annotations":{"kipam.io/demand":"p1"}},
       "spec":{"podCIDR":"10.1.0.0/24"},
       "status":{"images":[{"names":["registry/big:1"],"sizeBytes":1}]}}
      """;

  @Test
  void aPodIsReadWithItsMetadataNodeAndPhaseOnlyAndStoredWithoutManagedFields() {
    KubernetesSerialization json = new KubernetesSerialization();
    PodSummary pod = json.unmarshal(POD, PodSummary.class);

    TrimmedStore<PodSummary> store = TrimmedStore.withoutManagedFields();
    store.put(store.getKey(pod), pod);
    PodSummary kept = store.get("team-a/web-0");

    assertThat(kept.getMetadata().getUid()).isEqualTo("u1");
    assertThat(kept.getMetadata().getAnnotations())
        .containsEntry("kubernetes.io/config.mirror", "m1");
    assertThat(kept.getMetadata().getLabels()).containsEntry("app", "web");
    assertThat(kept.getMetadata().getDeletionTimestamp()).isNotNull();
    assertThat(kept.getMetadata().getManagedFields()).isNull();
    assertThat(kept.nodeName()).isEqualTo("n1");
    assertThat(kept.phase()).isEqualTo("Running");
    assertThat(json.asJson(kept)).doesNotContain("containers", "podIP", "managedFields");
  }

  @Test
  void aPodWithoutSpecOrStatusHasNeitherNodeNorPhase() {
    PodSummary pod =
        new KubernetesSerialization()
            .unmarshal(
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}",
                PodSummary.class);
    assertThat(pod.nodeName()).isNull();
    assertThat(pod.phase()).isNull();
  }

  @Test
  void aNodeIsReadWithItsMetadataOnly() {
    NodeSummary node = new KubernetesSerialization().unmarshal(NODE, NodeSummary.class);
    assertThat(node.getMetadata().getLabels()).containsEntry("zone", "a");
    assertThat(node.getMetadata().getAnnotations()).containsEntry("kipam.io/demand", "p1");
    assertThat(node.getMetadata().getUid()).isEqualTo("u2");
  }

  @Test
  void watchEventsOfPodsAndNodesArriveAsSummariesOnceTheyAreRegistered() {
    KubernetesSerialization json = new KubernetesSerialization(new ObjectMapper(), false);
    json.registerKubernetesResource(PodSummary.class);
    json.registerKubernetesResource(NodeSummary.class);
    WatchEvent pod =
        json.unmarshal("{\"type\":\"ADDED\",\"object\":" + POD + "}", WatchEvent.class);
    WatchEvent node =
        json.unmarshal("{\"type\":\"MODIFIED\",\"object\":" + NODE + "}", WatchEvent.class);
    assertThat(pod.getObject()).isInstanceOf(PodSummary.class);
    assertThat(((PodSummary) pod.getObject()).nodeName()).isEqualTo("n1");
    assertThat(node.getObject()).isInstanceOf(NodeSummary.class);
  }

  @Test
  void kipamsObjectsLoseOnlyTheirManagedFields() {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace("team-a")
            .withName("p1-10-0-0-5")
            .withFinalizers("kipam.io/attachment")
            .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kipam-node").build())
            .build());
    TrimmedStore<IPAddress> store = TrimmedStore.withoutManagedFields();
    store.put(store.getKey(address), address);
    IPAddress kept = store.get("team-a/p1-10-0-0-5");
    assertThat(kept.getMetadata().getFinalizers()).containsExactly("kipam.io/attachment");
    assertThat(kept.getMetadata().getManagedFields()).isNull();
  }
}
