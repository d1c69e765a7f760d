package io.kipam.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One kipam-operator for every test of a {@code @WithControlPlane} class, as a JUnit 5 extension on
 * a static field ({@code @RegisterExtension static final OperatorPerClass cluster =
 * OperatorPerClass.withSettings(Map.of()).andNodes("node")}): before the first test it installs
 * kipam's CRDs on the shared control plane, registers the Nodes asked for and starts a {@link
 * RunningOperator} with the settings given; after the last test it stops it.
 */
final class OperatorPerClass implements BeforeAllCallback, AfterAllCallback {

  private final Map<String, String> settings;
  private final List<String> nodes;
  private RunningOperator operator;

  private OperatorPerClass(Map<String, String> settings, List<String> nodes) {
    this.settings = settings;
    this.nodes = nodes;
  }

  /** An operator started with {@code settings} over {@link RunningOperator#environment}. */
  static OperatorPerClass withSettings(Map<String, String> settings) {
    return new OperatorPerClass(settings, List.of());
  }

  /**
   * An operator for the audit's own tests: an audit every 2 s, orphans after 3 s of grace, a resync
   * every 2 s, and {@code more} settings.
   */
  static OperatorPerClass withShortAudit(Map<String, String> more) {
    Map<String, String> settings =
        new HashMap<>(
            Map.of(
                "KIPAM_AUDIT_SECONDS", "2",
                "KIPAM_ORPHAN_GRACE_SECONDS", "3",
                "KIPAM_RESYNC_SECONDS", "2"));
    settings.putAll(more);
    return withSettings(settings);
  }

  /** The same, with one registered Node per prefix, named now and registered before the start. */
  OperatorPerClass andNodes(String... prefixes) {
    return new OperatorPerClass(
        settings, Arrays.stream(prefixes).map(Fixtures::uniqueName).toList());
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    ControlPlane controlPlane = ControlPlane.shared();
    KipamCrds.install(controlPlane.client());
    nodes.forEach(node -> Fixtures.registerNode(controlPlane.client(), node));
    operator = RunningOperator.start(controlPlane, settings);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (operator != null) {
      operator.close();
    }
  }

  /** The administrator's client of the shared control plane. */
  KubernetesClient client() {
    return ControlPlane.shared().client();
  }

  /** The running operator, once the class's tests run. */
  RunningOperator operator() {
    return operator;
  }

  /** The first registered Node's name. */
  String node() {
    return node(0);
  }

  /** The name of the {@code index}-th registered Node, in the order of {@link #andNodes}. */
  String node(int index) {
    return nodes.get(index);
  }
}
