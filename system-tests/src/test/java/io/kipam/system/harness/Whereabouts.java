package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Fixtures;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * whereabouts v0.9.4, built from its Go module by {@code hack/whereabouts/build.sh}: its plugin
 * called as a runtime calls an IPAM plugin, its CRDs (and the NetworkAttachmentDefinition CRD)
 * installed, and its settings file pointing at the test's control plane.
 */
public final class Whereabouts {

  public final Path dir;
  public final Path settings;

  /** whereabouts' namespace: where it keeps its IPPools and reservations. */
  public final String namespace;

  private Whereabouts(Path dir, Path settings, String namespace) {
    this.dir = dir;
    this.settings = settings;
    this.namespace = namespace;
  }

  /**
   * Builds (or reuses) whereabouts, installs its CRDs, and writes into {@code work} its settings
   * with a kubeconfig whose context names a namespace of its own (whereabouts keeps its records in
   * the namespace of its kubeconfig's context), so the records of one test are its own.
   */
  public static Whereabouts install(KubernetesClient client, Path kubeconfig, Path work)
      throws Exception {
    Path dir = build();
    installCrds(client, dir.resolve("crds"));
    String namespace = Fixtures.namespace(client, "wb-system");
    String context = "  context:\n";
    String config = Files.readString(kubeconfig);
    if (!config.contains(context)) {
      throw new IllegalStateException("no context in " + kubeconfig);
    }
    Path own = work.resolve("whereabouts.kubeconfig");
    Files.writeString(own, config.replace(context, context + "    namespace: " + namespace + "\n"));
    Path settings = writeSettings(work.resolve("whereabouts.conf"), own);
    return new Whereabouts(dir, settings, namespace);
  }

  /**
   * The plugin's CNI call {@code command} for {@code pod}'s {@code ifName}, with {@code config}.
   */
  public CniCall.Outcome call(
      String command, Pod pod, String containerId, String ifName, String config) {
    Map<String, String> env = CniCall.env(command, containerId, ifName, pod);
    env.put("NODENAME", pod.getSpec().getNodeName());
    return CniCall.run(dir.resolve("whereabouts"), env, config);
  }

  /**
   * Creates a NetworkAttachmentDefinition {@code namespace}/{@code name} whose CNI configuration is
   * {@code config}, as Multus reads it.
   */
  public static void createNad(
      KubernetesClient client, String namespace, String name, String config) {
    client
        .resource(
            new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
                .withApiVersion("k8s.cni.cncf.io/v1")
                .withKind("NetworkAttachmentDefinition")
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(name)
                .endMetadata()
                .addToAdditionalProperties("spec", Map.of("config", config))
                .build())
        .create();
  }

  /** Builds whereabouts (or reuses an earlier build) and returns its directory. */
  public static Path build() {
    Exec.Result built =
        Exec.run(
                List.of(
                    "bash",
                    ControlPlaneBinaries.repositoryRoot()
                        .resolve("hack/whereabouts/build.sh")
                        .toString()),
                Map.of(),
                "")
            .orFail();
    return Path.of(built.stdout().trim().lines().reduce((a, b) -> b).orElseThrow());
  }

  /** Applies the CRDs of {@code dir} (whereabouts' and the NetworkAttachmentDefinition's). */
  public static void installCrds(KubernetesClient client, Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : files.sorted().toList()) {
        try (InputStream in = Files.newInputStream(file)) {
          CustomResourceDefinition crd =
              client.apiextensions().v1().customResourceDefinitions().load(in).item();
          client.resource(crd).forceConflicts().serverSideApply();
          Fixtures.awaitEstablished(client, crd.getMetadata().getName());
        }
      }
    }
  }

  /**
   * Writes whereabouts' settings file, {@code file}, naming {@code kubeconfig}: whereabouts reads
   * its settings from a file of its own, as its DaemonSet installs one; without it every call fails
   * with "config file not found".
   */
  public static Path writeSettings(Path file, Path kubeconfig) throws IOException {
    Files.writeString(
        file,
        "{\"datastore\":\"kubernetes\",\"log_level\":\"error\",\"kubernetes\":"
            + "{\"kubeconfig\":\""
            + kubeconfig
            + "\"}}");
    return file;
  }
}
