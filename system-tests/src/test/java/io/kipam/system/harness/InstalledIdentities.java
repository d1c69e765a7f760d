package io.kipam.system.harness;

import io.fabric8.kubernetes.client.Config;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * kipam installed on a control plane of a test's own as users install it (parts of {@code config/}
 * applied with kubectl), and kubeconfigs with the identities the install gives: a token of the
 * {@code kipam-operator} service account, and for each node a token of {@code kipam-node} bound to
 * its Node (as a DaemonSet pod's projected token is), so kube-apiserver puts the node's name in the
 * request's user info.
 */
public final class InstalledIdentities {

  public static final String NAMESPACE = "kipam-system";

  private final ControlPlane controlPlane;
  private final Path dir;
  private final Map<String, Path> nodes = new HashMap<>();

  public InstalledIdentities(ControlPlane controlPlane, Path dir) {
    this.controlPlane = controlPlane;
    this.dir = dir;
  }

  /** Applies kipam's namespace and {@code config/<part>} for each part, and waits for the CRDs. */
  public static void apply(ControlPlane controlPlane, String... parts) {
    Path config = ControlPlaneBinaries.repositoryRoot().resolve("config");
    controlPlane.kubectl("apply", "-f", config.resolve("default/namespace.yaml").toString());
    for (String part : parts) {
      controlPlane.kubectl("apply", "-k", config.resolve(part).toString());
    }
    controlPlane.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/ippools.kipam.io",
        "crd/ipblocks.kipam.io",
        "crd/ipaddresses.kipam.io");
  }

  /**
   * {@code operator} set to run as the installed operator: its kubeconfig ({@link #operator()}) and
   * its lease in {@link #NAMESPACE}.
   */
  public OperatorProcess asInstalled(OperatorProcess operator) {
    return operator
        .withEnv("KUBECONFIG", operator().toString())
        .withEnv("KIPAM_LEASE_NAMESPACE", NAMESPACE);
  }

  /** A kubeconfig with kipam-operator's service account token. */
  public Path operator() {
    return kubeconfig("kipam-operator", token("kipam-operator"));
  }

  /** A kubeconfig with a kipam-node token bound to {@code node}; the same file for each call. */
  public Path node(String node) {
    return nodes.computeIfAbsent(
        node,
        n ->
            kubeconfig(
                n, token("kipam-node", "--bound-object-kind", "Node", "--bound-object-name", n)));
  }

  /**
   * A token of {@code serviceAccount} of kipam-system, valid for an hour, bound as {@code bound}.
   */
  public String token(String serviceAccount, String... bound) {
    List<String> args =
        new ArrayList<>(
            List.of("create", "token", serviceAccount, "-n", NAMESPACE, "--duration", "1h"));
    args.addAll(List.of(bound));
    return controlPlane.kubectl(args.toArray(String[]::new)).trim();
  }

  /** The API server and its CA from the admin's configuration, the user only {@code token}. */
  public Path kubeconfig(String name, String token) {
    Config admin = controlPlane.adminConfig();
    String text =
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: kipam",
            "  cluster:",
            "    server: " + admin.getMasterUrl(),
            "    certificate-authority: " + admin.getCaCertFile(),
            "users:",
            "- name: " + name,
            "  user:",
            "    token: " + token,
            "contexts:",
            "- name: kipam",
            "  context:",
            "    cluster: kipam",
            "    user: " + name,
            "current-context: kipam",
            "");
    try {
      Path file = dir.resolve("kubeconfig-" + name);
      Files.writeString(file, text);
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
