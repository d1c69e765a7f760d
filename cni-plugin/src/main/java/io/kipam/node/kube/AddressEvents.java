package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Events (core/v1) about this node's IPAddresses into their namespace, where {@code kubectl
 * describe ipaddress} and {@code kubectl get events} find them. An Event that cannot be written
 * (the namespace is being deleted, say) is logged and otherwise ignored: it never holds up what it
 * reports.
 */
public final class AddressEvents {

  private static final Logger log = LoggerFactory.getLogger(AddressEvents.class);
  private static final String COMPONENT = "kipam-node";

  private final KubernetesClient client;
  private final String node;
  private final Clock clock;

  public AddressEvents(KubernetesClient client, String node, Clock clock) {
    this.client = client;
    this.node = node;
    this.clock = clock;
  }

  public void record(IPAddress object, String reason, String message) {
    record(ApiConstants.API_VERSION, IPAddress.KIND, object.getMetadata(), reason, message);
  }

  /** An Event about any namespaced object, e.g. an IPAMClaim whose address was attached. */
  public void record(
      String apiVersion,
      String kind,
      io.fabric8.kubernetes.api.model.ObjectMeta meta,
      String reason,
      String message) {
    String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    var event =
        new EventBuilder()
            .withNewMetadata()
            .withGenerateName(meta.getName() + ".")
            .withNamespace(meta.getNamespace())
            .endMetadata()
            .withInvolvedObject(
                new ObjectReferenceBuilder()
                    .withApiVersion(apiVersion)
                    .withKind(kind)
                    .withName(meta.getName())
                    .withNamespace(meta.getNamespace())
                    .withUid(meta.getUid())
                    .withResourceVersion(meta.getResourceVersion())
                    .build())
            .withType("Normal")
            .withReason(reason)
            .withMessage(message)
            .withNewSource()
            .withComponent(COMPONENT)
            .withHost(node)
            .endSource()
            .withReportingComponent(COMPONENT)
            .withReportingInstance(node)
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withCount(1)
            .build();
    try {
      client.v1().events().inNamespace(meta.getNamespace()).resource(event).create();
    } catch (KubernetesClientException e) {
      log.info(
          "cannot record Event {} on {} {}/{}: {}",
          reason,
          kind,
          meta.getNamespace(),
          meta.getName(),
          e.getMessage());
    }
  }
}
