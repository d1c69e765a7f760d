package io.kipam.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.util.Map;

/**
 * A control plane of a test class's own, with kipam's CRDs, one registered Node and an in-JVM
 * operator per test: for a class that runs beside the rest of the suite ({@link
 * io.kipam.testing.BesideTheSuite}), which must share neither the JVM's control plane nor its
 * operators with the classes running meanwhile.
 */
final class OwnControlPlane implements AutoCloseable {

  final ControlPlane controlPlane;
  final KubernetesClient client;
  final Kipam kipam;
  final String node = Fixtures.uniqueName("node");
  private RunningOperator operator;

  OwnControlPlane() {
    controlPlane = ControlPlane.fresh();
    try {
      client = controlPlane.client();
      KipamCrds.install(client);
      kipam = new Kipam(client);
      Fixtures.registerNode(client, node);
    } catch (RuntimeException | Error e) {
      controlPlane.close();
      throw e;
    }
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

  void stopOperator() {
    if (operator != null) {
      operator.close();
      operator = null;
    }
  }

  @Override
  public void close() {
    try {
      stopOperator();
    } finally {
      controlPlane.close();
    }
  }
}
