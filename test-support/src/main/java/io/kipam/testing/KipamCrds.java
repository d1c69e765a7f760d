package io.kipam.testing;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Installs kipam's CRDs from {@code config/crd}, the files users apply, rather than from the
 * classes, so tests exercise exactly what ships.
 */
public final class KipamCrds {

  private KipamCrds() {}

  /** Applies every CRD in config/crd (server-side apply, idempotent) and waits until served. */
  public static synchronized void install(KubernetesClient client) {
    files().forEach(file -> apply(client, file));
  }

  /**
   * Applies the optional IPAMClaim CRD of {@code config/ipamclaims}, as a user who wants persistent
   * addresses installs it, and waits until it is served.
   */
  public static synchronized void installIpamClaims(KubernetesClient client) {
    apply(
        client,
        ControlPlaneBinaries.repositoryRoot()
            .resolve("config/ipamclaims/ipamclaims.k8s.cni.cncf.io.yaml"));
  }

  private static void apply(KubernetesClient client, Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      CustomResourceDefinition crd =
          client.apiextensions().v1().customResourceDefinitions().load(in).item();
      client.resource(crd).forceConflicts().serverSideApply();
      Fixtures.awaitEstablished(client, crd.getMetadata().getName());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /** The CRD files, from the checkout's config/crd. */
  public static List<Path> files() {
    Path dir = ControlPlaneBinaries.repositoryRoot().resolve("config/crd");
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(".kipam.io.yaml"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
  }
}
