package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Fixtures;
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

  private Whereabouts(Path dir, Path settings) {
    this.dir = dir;
    this.settings = settings;
  }

  /** Builds (or reuses) whereabouts, installs its CRDs, writes its settings into {@code work}. */
  public static Whereabouts install(KubernetesClient client, Path kubeconfig, Path work)
      throws Exception {
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
    Path dir = Path.of(built.stdout().trim().lines().reduce((a, b) -> b).orElseThrow());
    try (Stream<Path> files = Files.list(dir.resolve("crds"))) {
      for (Path file : files.sorted().toList()) {
        try (InputStream in = Files.newInputStream(file)) {
          CustomResourceDefinition crd =
              client.apiextensions().v1().customResourceDefinitions().load(in).item();
          client.resource(crd).forceConflicts().serverSideApply();
          Fixtures.awaitEstablished(client, crd.getMetadata().getName());
        }
      }
    }
    // whereabouts reads its settings from a file of its own, as its DaemonSet installs one.
    Path settings = work.resolve("whereabouts.conf");
    Files.writeString(
        settings,
        "{\"datastore\":\"kubernetes\",\"log_level\":\"error\",\"kubernetes\":"
            + "{\"kubeconfig\":\""
            + kubeconfig
            + "\"}}");
    return new Whereabouts(dir, settings);
  }

  /**
   * The plugin's CNI call {@code command} for {@code pod}'s {@code ifName}, with {@code config}.
   */
  public CniCall.Outcome call(
      String command, Pod pod, String containerId, String ifName, String config) {
    Map<String, String> env =
        CniCall.env(
            command,
            containerId,
            ifName,
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            pod.getMetadata().getUid());
    env.put("NODENAME", pod.getSpec().getNodeName());
    return CniCall.run(dir.resolve("whereabouts"), env, config);
  }
}
