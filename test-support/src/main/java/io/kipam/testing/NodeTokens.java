package io.kipam.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Clients with the credentials kipam-node has on a node: a token of the {@code kipam-node} service
 * account of {@code kipam-system} bound to that Node, so kube-apiserver puts the node's name in the
 * request's user info ({@code authentication.kubernetes.io/node-name}), as it does for the daemon's
 * projected token.
 */
public final class NodeTokens {

  private NodeTokens() {}

  /** kipam-node's client on {@code node}, otherwise configured as the administrator's. */
  public static KubernetesClient kipamNode(ControlPlane controlPlane, String node) {
    return kipamNode(controlPlane, node, controlPlane.adminConfig());
  }

  /** kipam-node's client on {@code node}, otherwise configured as {@code base} (timeouts). */
  public static KubernetesClient kipamNode(ControlPlane controlPlane, String node, Config base) {
    String token =
        controlPlane
            .kubectl(
                "create",
                "token",
                "kipam-node",
                "-n",
                "kipam-system",
                "--bound-object-kind",
                "Node",
                "--bound-object-name",
                node)
            .trim();
    return new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(base).withOauthToken(token).build())
        .build();
  }
}
