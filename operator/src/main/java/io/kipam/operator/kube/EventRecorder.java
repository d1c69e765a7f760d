package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a Kubernetes Event (core/v1) for every state-changing decision of the operator, so {@code
 * kubectl describe ippool} and {@code kubectl get events} tell what it did and why. Events about
 * cluster-scoped objects (pools, blocks) go to one namespace ({@code default} unless configured),
 * as the kubelet's Events about Nodes do; Events about a namespaced object (an IPAddress) go to its
 * own namespace, where {@code kubectl describe} looks for them. An Event that cannot be written is
 * logged and otherwise ignored: it never fails the decision it reports.
 */
public final class EventRecorder {

  private static final Logger log = LoggerFactory.getLogger(EventRecorder.class);
  private static final String COMPONENT = "kipam-operator";

  /** Event types, as Kubernetes defines them. */
  public enum Type {
    Normal,
    Warning
  }

  private final KubernetesClient client;
  private final String namespace;
  private final String instance;
  private final Clock clock;

  public EventRecorder(KubernetesClient client, String namespace, String instance, Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.instance = instance;
    this.clock = clock;
  }

  public void record(HasMetadata object, Type type, String reason, String message) {
    String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    String objectNamespace = object.getMetadata().getNamespace();
    String namespace = objectNamespace == null ? this.namespace : objectNamespace;
    var event =
        new EventBuilder()
            .withNewMetadata()
            .withGenerateName(object.getMetadata().getName() + ".")
            .withNamespace(namespace)
            .endMetadata()
            .withInvolvedObject(
                new ObjectReferenceBuilder()
                    .withApiVersion(object.getApiVersion())
                    .withKind(object.getKind())
                    .withName(object.getMetadata().getName())
                    .withNamespace(objectNamespace)
                    .withUid(object.getMetadata().getUid())
                    .withResourceVersion(object.getMetadata().getResourceVersion())
                    .build())
            .withType(type.name())
            .withReason(reason)
            .withMessage(message)
            .withNewSource()
            .withComponent(COMPONENT)
            .endSource()
            .withReportingComponent(COMPONENT)
            .withReportingInstance(instance)
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withCount(1)
            .build();
    try {
      client.v1().events().inNamespace(namespace).resource(event).create();
    } catch (KubernetesClientException e) {
      log.warn(
          "cannot record Event {} on {} {}: {}",
          reason,
          object.getKind(),
          object.getMetadata().getName(),
          e.getMessage());
    }
  }
}
