package io.kipam.api.install;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.NodeTokens;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * kipam installed the way users install it, {@code kubectl apply -k config/default}, and the
 * questions the install tests ask the API server about it.
 */
final class KipamInstall {

  static final String NAMESPACE = "kipam-system";
  static final String NODE_SA = "system:serviceaccount:kipam-system:kipam-node";
  static final String OPERATOR_SA = "system:serviceaccount:kipam-system:kipam-operator";

  private KipamInstall() {}

  static Path entryPoint() {
    return ControlPlaneBinaries.repositoryRoot().resolve("config/default");
  }

  /**
   * A client with the credentials kipam-node has on {@code node}: a token of its service account
   * bound to that Node (so the API server puts the node's name in the request's user info).
   */
  static KubernetesClient nodeClient(ControlPlane controlPlane, String node) {
    return NodeTokens.kipamNode(controlPlane, node);
  }

  /**
   * A client with a plain token of kipam-system's {@code serviceAccount}, bound to no object: the
   * API server puts no node name in the request's user info.
   */
  static KubernetesClient serviceAccountClient(ControlPlane controlPlane, String serviceAccount) {
    String token = controlPlane.kubectl("create", "token", serviceAccount, "-n", NAMESPACE).trim();
    return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(
            new io.fabric8.kubernetes.client.ConfigBuilder(controlPlane.adminConfig())
                .withOauthToken(token)
                .build())
        .build();
  }

  /** Applies config/default (idempotent) and returns what kubectl printed. */
  static String apply(ControlPlane controlPlane) {
    return controlPlane.kubectl("apply", "-k", entryPoint().toString());
  }

  /**
   * kipam's CRDs and config/default applied, and bare Nodes {@code nodes} and namespaces {@code
   * namespaces} made (all server-side applied, so idempotent).
   */
  static void applyWith(ControlPlane controlPlane, List<String> nodes, List<String> namespaces) {
    KubernetesClient admin = controlPlane.client();
    KipamCrds.install(admin);
    apply(controlPlane);
    for (String node : nodes) {
      admin
          .resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build())
          .serverSideApply();
    }
    for (String namespace : namespaces) {
      admin
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .serverSideApply();
    }
  }

  /**
   * {@code kubectl auth can-i VERB RESOURCE --as=USER [-n NAMESPACE]}: whether the API server's
   * authorizer lets {@code user} do it. Exit code 0 is yes, 1 is no; anything else is a failure.
   */
  static boolean canI(
      ControlPlane controlPlane, String user, String verb, String resource, String namespace) {
    List<String> command = new ArrayList<>();
    command.add(controlPlane.binary("kubectl").toString());
    command.add("--kubeconfig=" + controlPlane.adminKubeconfig());
    // "pods/status" would read as the pod named status: a subresource has a flag of its own.
    String[] parts = resource.split("/", 2);
    command.addAll(List.of("auth", "can-i", verb, parts[0], "--as=" + user));
    if (parts.length == 2) {
      command.add("--subresource=" + parts[1]);
    }
    if (namespace != null) {
      command.add("--namespace=" + namespace);
    } else {
      command.add("--all-namespaces");
    }
    try {
      Process kubectl = new ProcessBuilder(command).start();
      kubectl.getOutputStream().close();
      String out = new String(kubectl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      String err = new String(kubectl.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      int exit = kubectl.waitFor();
      if (exit == 0 || exit == 1) {
        return exit == 0;
      }
      throw new IllegalStateException(
          String.join(" ", command.subList(2, command.size())) + " failed: " + out + err);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kubectl", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running kubectl auth can-i", e);
    }
  }
}
