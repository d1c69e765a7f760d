package io.kipam.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Step 2 of the switch-over from whereabouts (docs/migration.md), as the tests take it: a
 * ValidatingAdmissionPolicy and its binding refusing pod creates in the namespaces labelled {@link
 * #LABEL} with the hold's name. Deleting the returned objects releases the hold.
 */
public final class SwitchOverHold {

  /** The namespace label whose value names the hold that refuses the namespace's new pods. */
  public static final String LABEL = "kipam-test-hold";

  private SwitchOverHold() {}

  /** Creates the hold {@code name} and returns its objects. */
  public static List<HasMetadata> create(KubernetesClient client, String name) {
    String yaml =
        """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {name: %2$s}
        spec:
          failurePolicy: Fail
          matchConstraints:
            namespaceSelector: {matchLabels: {%1$s: %2$s}}
            resourceRules:
            - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
          validations:
          - {expression: "false", message: "new pods of this network are held while it moves to kipam"}
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {name: %2$s}
        spec: {policyName: %2$s, validationActions: [Deny]}
        """
            .formatted(LABEL, name);
    List<HasMetadata> objects =
        client.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
    for (HasMetadata object : objects) {
      client.resource(object).create();
    }
    return objects;
  }
}
