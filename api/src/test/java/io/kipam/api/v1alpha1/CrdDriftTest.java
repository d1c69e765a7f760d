package io.kipam.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Fails the build when a CRD class changed but config/crd was not regenerated. Run with {@code
 * -Dkipam.updateCrds=true} to rewrite config/crd from the classes.
 */
class CrdDriftTest {

  private final Path generatedDir =
      Path.of(System.getProperty("kipam.generatedCrdDir", "target/crd-generated"));
  private final boolean update = Boolean.getBoolean("kipam.updateCrds");

  @Test
  void committedCrdsEqualWhatTheClassesGenerate() throws IOException {
    for (Class<? extends HasMetadata> resource : CrdFiles.RESOURCES) {
      String expected = CrdFiles.render(CrdFiles.generated(generatedDir, resource), resource);
      Path committed = CrdFiles.committed(CrdFiles.crdDir(), resource);
      if (update) {
        Files.createDirectories(committed.getParent());
        Files.writeString(committed, expected, StandardCharsets.UTF_8);
        continue;
      }
      assertThat(committed)
          .as(
              "config/crd/%s is out of date with %s; regenerate it with ./mvnw -pl api -am test"
                  + " -Dtest=CrdDriftTest -Dkipam.updateCrds=true"
                  + " -Dsurefire.failIfNoSpecifiedTests=false",
              committed.getFileName(), resource.getSimpleName())
          .exists()
          .usingCharset(StandardCharsets.UTF_8)
          .hasContent(expected);
    }
  }
}
