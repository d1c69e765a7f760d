package io.kipam.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The committed CRDs in {@code config/crd}: where they are, and how the generator's output becomes
 * them. The one change made to the generator's output is the order of printer columns, which the
 * generator sorts by JSON path and kipam wants as declared (for IPAddress: IP, POOL, POD, NODE,
 * AGE).
 */
final class CrdFiles {

  static final List<Class<? extends HasMetadata>> RESOURCES =
      List.of(IPPool.class, IPBlock.class, IPAddress.class);

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private CrdFiles() {}

  static String crdName(Class<? extends HasMetadata> resource) {
    return HasMetadata.getPlural(resource) + "." + HasMetadata.getGroup(resource);
  }

  /** The committed CRD of a resource class, relative to the repository root. */
  static Path committed(Path crdDir, Class<? extends HasMetadata> resource) {
    return crdDir.resolve(crdName(resource) + ".yaml");
  }

  static Path generated(Path generatedDir, Class<? extends HasMetadata> resource) {
    return generatedDir.resolve(crdName(resource) + "-v1.yml");
  }

  /** The text config/crd must hold for a resource, given the generator's output for it. */
  static String render(Path generatedFile, Class<? extends HasMetadata> resource)
      throws IOException {
    CustomResourceDefinition crd;
    try (InputStream in = Files.newInputStream(generatedFile)) {
      crd = SERIALIZATION.unmarshal(in, CustomResourceDefinition.class);
    }
    List<String> declared =
        Arrays.stream(resource.getAnnotationsByType(AdditionalPrinterColumn.class))
            .map(AdditionalPrinterColumn::name)
            .toList();
    for (CustomResourceDefinitionVersion version : crd.getSpec().getVersions()) {
      List<CustomResourceColumnDefinition> columns = version.getAdditionalPrinterColumns();
      if (columns != null) {
        columns.sort(Comparator.comparingInt(c -> declared.indexOf(c.getName())));
      }
    }
    return "# Generated from "
        + resource.getName()
        + " by the fabric8 crd-generator; do not edit.\n"
        + "# After changing the class: ./mvnw -pl api -am test -Dtest=CrdDriftTest"
        + " -Dkipam.updateCrds=true -Dsurefire.failIfNoSpecifiedTests=false\n"
        + SERIALIZATION.asYaml(crd);
  }

  /** config/crd, wherever the test runs from. */
  static Path crdDir() {
    return Path.of(System.getProperty("kipam.crdDir", "../config/crd"));
  }
}
