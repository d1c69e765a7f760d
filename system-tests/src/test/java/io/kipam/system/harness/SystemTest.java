package io.kipam.system.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The one JUnit 5 extension of the system tests, on a static field of each test class:
 *
 * <pre>{@code
 * @RegisterExtension static final SystemTest SYSTEM = SystemTest.withOperator();
 * private final KipamProcesses processes = SYSTEM.processesOfEachTest("demand");
 * }</pre>
 *
 * <p>Before the class it starts the JVM's shared control plane, removes what earlier classes left
 * on it and installs kipam's CRDs; with {@link #withOperator} it then starts one leading
 * kipam-operator process for the class ({@link ClassOperator}), which marks the pools the tests
 * create Ready and is started again within a second if a test kills it. Each test gets the pools'
 * network of its own, and the processes it starts through {@link #processesOfEachTest} are stopped
 * after it. It injects {@link ControlPlane} and {@link KubernetesClient} parameters, and a failed
 * test keeps the control plane's logs.
 */
public final class SystemTest
    implements BeforeAllCallback,
        AfterAllCallback,
        BeforeEachCallback,
        AfterEachCallback,
        ParameterResolver,
        TestWatcher {

  private final ControlPlaneExtension controlPlane = new ControlPlaneExtension();
  private final boolean operatorPerClass;
  private ClassOperator operator;
  private final List<KipamProcesses> pending = new ArrayList<>();
  private final List<KipamProcesses> opened = new ArrayList<>();

  private SystemTest(boolean operatorPerClass) {
    this.operatorPerClass = operatorPerClass;
  }

  /** The shared control plane with kipam's CRDs; the tests start what else they need. */
  public static SystemTest againstControlPlane() {
    return new SystemTest(false);
  }

  /**
   * As {@link #againstControlPlane}, with one leading kipam-operator for the class's tests that
   * asks for no idle block back (the idle delay is an hour), so that a test about the node's own
   * blocks sees only the releases it drives itself; tests about releases start their own.
   */
  public static SystemTest withOperator() {
    return new SystemTest(true);
  }

  /**
   * The kipam processes of the test whose instance is being made (call it in a field's
   * initializer): opened before the test (its directory and three namespaces of its own), every
   * process started through it stopped after the test, in the order they were started.
   */
  public synchronized KipamProcesses processesOfEachTest(String name) {
    KipamProcesses processes = KipamProcesses.unopened(name);
    pending.add(processes);
    return processes;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    controlPlane.beforeAll(context);
    io.kipam.testing.KipamCrds.install(ControlPlane.shared().client());
    if (operatorPerClass) {
      operator = ClassOperator.start(context.getDisplayName());
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (operator != null) {
      operator.close();
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    controlPlane.beforeEach(context);
    List<KipamProcesses> toOpen;
    synchronized (this) {
      toOpen = List.copyOf(pending);
      pending.clear();
    }
    ControlPlane shared = ControlPlane.shared();
    for (KipamProcesses processes : toOpen) {
      processes.open(shared, shared.client());
      opened.add(processes);
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    Close.all(opened.toArray(AutoCloseable[]::new));
    opened.clear();
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return controlPlane.supportsParameter(parameter, context);
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return controlPlane.resolveParameter(parameter, context);
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    controlPlane.testFailed(context, cause);
  }

  /** SIGKILLs the class's operator; it is started again within a second. */
  public void killOperator() throws InterruptedException {
    classOperator().kill();
  }

  /** The class's operator's log, for messages of failed assertions. */
  public java.nio.file.Path operatorLog() {
    return classOperator().log();
  }

  private ClassOperator classOperator() {
    if (operator == null) {
      throw new IllegalStateException("register SystemTest.withOperator() for a class operator");
    }
    return operator;
  }
}
