package io.kipam.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A control plane of a test class's own, with kipam's CRDs, one registered Node and an in-JVM
 * operator per test, on a static field of the class:
 *
 * <pre>{@code
 * @RegisterExtension static final OwnControlPlane CLUSTER = new OwnControlPlane();
 * }</pre>
 *
 * For a class that runs beside the rest of the suite ({@link io.kipam.testing.BesideTheSuite}),
 * which must share neither the JVM's control plane nor its operators with the classes running
 * meanwhile. The control plane starts before the class and stops after it; the operator a test
 * starts stops after the test.
 */
final class OwnControlPlane implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

  ControlPlane controlPlane;
  KubernetesClient client;
  Kipam kipam;
  final String node = Fixtures.uniqueName("node");
  private RunningOperator operator;

  @Override
  public void beforeAll(ExtensionContext context) {
    controlPlane = ControlPlane.fresh();
    client = controlPlane.client();
    KipamCrds.install(client);
    kipam = new Kipam(client);
    Fixtures.registerNode(client, node);
  }

  /**
   * Starts the operator with {@code overrides} over the tests' settings ({@link RunningOperator}),
   * after stopping the one before; the settings it runs with.
   */
  OperatorSettings startOperator(Map<String, String> overrides) throws Exception {
    stopOperator();
    operator = RunningOperator.start(controlPlane, overrides);
    return RunningOperator.settings(controlPlane, overrides);
  }

  private void stopOperator() {
    if (operator != null) {
      operator.close();
      operator = null;
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    stopOperator();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    try {
      stopOperator();
    } finally {
      if (controlPlane != null) {
        controlPlane.close();
      }
    }
  }
}
