package io.kipam.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;

/** What the extension promises beyond starting the control plane. */
@WithControlPlane
class ControlPlaneExtensionIT {

  @Test
  void failedTestKeepsEveryComponentLog() throws IOException {
    Path kept =
        Path.of(System.getProperty("kipam.controlPlaneLogs", "target/control-plane-logs"))
            .resolve("DeliberatelyFailing.fails");
    deleteRecursively(kept);

    EngineTestKit.engine("junit-jupiter")
        .selectors(selectClass(DeliberatelyFailing.class))
        .execute()
        .testEvents()
        .assertStatistics(stats -> stats.started(1).failed(1));

    for (String component :
        new String[] {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}) {
      assertThat(kept.resolve(component + ".log")).isNotEmptyFile();
    }
  }

  @Test
  void injectsTheSameControlPlaneAndClientIntoEveryTest(
      ControlPlane controlPlane, KubernetesClient client) {
    assertThat(controlPlane).isSameAs(ControlPlane.shared());
    assertThat(client).isSameAs(controlPlane.client());
    assertThat(client.getKubernetesVersion().getGitVersion()).startsWith("v1.");
  }

  /** Run only through the test kit above: failsafe skips nested classes. */
  @WithControlPlane
  static class DeliberatelyFailing {
    @Test
    void fails(KubernetesClient client) {
      fail(
          "deliberate failure; the namespace list has %d items",
          client.namespaces().list().getItems().size());
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
