package io.kipam.e2e;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.RealNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * whereabouts v0.9.4 (built from its Go module by {@code hack/whereabouts/build.sh}) as an IPAM
 * plugin of a real node: its binary next to the node's other CNI plugins, its CRDs applied, and its
 * settings file naming a kubeconfig that reaches the API server from inside the node's network
 * namespace and whose context names {@link #namespace}, where whereabouts keeps its records.
 */
final class WhereaboutsOnRealNode {

  static final String IPPOOLS = "whereabouts.cni.cncf.io/v1alpha1";

  private final RealNode node;
  private final Path settings;

  /** whereabouts' namespace: its IPPools, reservations and leader-election Lease. */
  final String namespace;

  private WhereaboutsOnRealNode(RealNode node, Path settings, String namespace) {
    this.node = node;
    this.settings = settings;
    this.namespace = namespace;
  }

  static WhereaboutsOnRealNode install(RealNode node, String namespace) {
    Path built = build();
    try {
      Path binary = node.cniBinDir().resolve("whereabouts");
      Files.copy(built.resolve("whereabouts"), binary);
      binary.toFile().setExecutable(true);
      try (Stream<Path> crds = Files.list(built.resolve("crds"))) {
        for (Path crd :
            crds.filter(p -> p.getFileName().toString().startsWith("whereabouts."))
                .sorted()
                .toList()) {
          node.controlPlane().kubectl("apply", "--server-side", "-f", crd.toString());
        }
      }
      node.client()
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .create();
      // whereabouts keeps its records in the namespace of its kubeconfig's context.
      String context = "  context:\n";
      String config = Files.readString(node.controlPlane().adminKubeconfigInNamespace());
      if (!config.contains(context)) {
        throw new IllegalStateException("the node's kubeconfig has no context");
      }
      Path dir = Files.createDirectories(node.cniDataDir().resolve("whereabouts"));
      Path kubeconfig = dir.resolve("whereabouts.kubeconfig");
      Files.writeString(
          kubeconfig, config.replace(context, context + "    namespace: " + namespace + "\n"));
      // Without a settings file every call fails with "config file not found".
      Path settings = dir.resolve("whereabouts.conf");
      Files.writeString(
          settings,
          "{\"datastore\": \"kubernetes\", \"log_level\": \"error\","
              + " \"kubernetes\": {\"kubeconfig\": \""
              + kubeconfig
              + "\"}}");
      return new WhereaboutsOnRealNode(node, settings, namespace);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot install whereabouts on the real node", e);
    }
  }

  /** whereabouts' {@code ipam} section for {@code range}, pointing at its settings file. */
  String ipam(String range) {
    return "{\"type\": \"whereabouts\", \"range\": \"%s\", \"configuration_path\": \"%s\"}"
        .formatted(range, settings);
  }

  /**
   * Every address whereabouts' IPPools record as allocated, to the {@code namespace/name} of its
   * pod: an allocation's key is its offset from the range's network address.
   */
  @SuppressWarnings("unchecked")
  Map<String, String> allocations() {
    Map<String, String> byAddress = new TreeMap<>();
    List<GenericKubernetesResource> pools =
        node.client()
            .genericKubernetesResources(IPPOOLS, "IPPool")
            .inNamespace(namespace)
            .list()
            .getItems();
    for (GenericKubernetesResource pool : pools) {
      Map<String, Object> spec = (Map<String, Object>) pool.getAdditionalProperties().get("spec");
      String range = (String) spec.get("range");
      Map<String, Map<String, Object>> allocations =
          (Map<String, Map<String, Object>>) spec.getOrDefault("allocations", Map.of());
      for (var allocation : allocations.entrySet()) {
        byAddress.put(
            offset(range, Long.parseLong(allocation.getKey())),
            (String) allocation.getValue().get("podref"));
      }
    }
    return byAddress;
  }

  /** The address {@code offset} after the network address of {@code cidr}. */
  static String offset(String cidr, long offset) {
    try {
      byte[] network = InetAddress.getByName(cidr.substring(0, cidr.indexOf('/'))).getAddress();
      byte[] sum = new BigInteger(1, network).add(BigInteger.valueOf(offset)).toByteArray();
      byte[] address = new byte[network.length];
      int copy = Math.min(sum.length, address.length);
      System.arraycopy(sum, sum.length - copy, address, address.length - copy, copy);
      return InetAddress.getByAddress(address).getHostAddress();
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not a CIDR: " + cidr, e);
    }
  }

  /** Builds whereabouts (or reuses an earlier build) and returns its directory. */
  private static Path build() {
    Path script = ControlPlaneBinaries.repositoryRoot().resolve("hack/whereabouts/build.sh");
    try {
      Process process =
          new ProcessBuilder("bash", script.toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int exit = process.waitFor();
      if (exit != 0) {
        throw new IllegalStateException(script + " exited " + exit + ": " + out);
      }
      return Path.of(out.trim().lines().reduce((a, b) -> b).orElseThrow());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + script, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while building whereabouts", e);
    }
  }
}
