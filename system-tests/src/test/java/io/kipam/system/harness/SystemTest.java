package io.kipam.system.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneExtension;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
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
 * test keeps the control plane's logs. {@link #onItsOwnControlPlane} does the same on a control
 * plane of the class's own, for a class that runs beside the others.
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
  private final boolean ownControlPlane;
  private ControlPlane own;
  private ClassOperator operator;
  private final List<KipamProcesses> pending = new ArrayList<>();
  private final List<KipamProcesses> opened = new ArrayList<>();

  private SystemTest(boolean operatorPerClass, boolean ownControlPlane) {
    this.operatorPerClass = operatorPerClass;
    this.ownControlPlane = ownControlPlane;
  }

  /** The shared control plane with kipam's CRDs; the tests start what else they need. */
  public static SystemTest againstControlPlane() {
    return new SystemTest(false, false);
  }

  /**
   * As {@link #againstControlPlane}, with one leading kipam-operator for the class's tests that
   * asks for no idle block back (the idle delay is an hour), so that a test about the node's own
   * blocks sees only the releases it drives itself; tests about releases start their own.
   */
  public static SystemTest withOperator() {
    return new SystemTest(true, false);
  }

  /**
   * The same, on a control plane of the class's own (started before the class, with kipam's CRDs,
   * and stopped after it) instead of the JVM's shared one: for a class that runs beside the others
   * ({@link io.kipam.testing.BesideTheSuite}). Its tests take the control plane from {@link
   * #controlPlane} and {@link #client}.
   */
  public SystemTest onItsOwnControlPlane() {
    return new SystemTest(operatorPerClass, true);
  }

  /** The control plane of the class's tests: the JVM's shared one, or the class's own. */
  public ControlPlane controlPlane() {
    if (!ownControlPlane) {
      return ControlPlane.shared();
    }
    if (own == null) {
      throw new IllegalStateException("the class's control plane starts before its tests");
    }
    return own;
  }

  /** The administrator's client of {@link #controlPlane}. */
  public KubernetesClient client() {
    return controlPlane().client();
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
    if (ownControlPlane) {
      Fixtures.newTestNetwork();
      own = ControlPlane.fresh();
    } else {
      controlPlane.beforeAll(context);
    }
    KipamCrds.install(controlPlane().client());
    if (operatorPerClass) {
      operator = ClassOperator.start(context.getDisplayName(), controlPlane());
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    Close.all(operator, own);
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    if (ownControlPlane) {
      Fixtures.newTestNetwork();
    } else {
      controlPlane.beforeEach(context);
    }
    List<KipamProcesses> toOpen;
    synchronized (this) {
      toOpen = List.copyOf(pending);
      pending.clear();
    }
    ControlPlane current = controlPlane();
    for (KipamProcesses processes : toOpen) {
      processes.open(current, current.client());
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
    return parameter.getParameter().getType() == ControlPlane.class ? controlPlane() : client();
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    ControlPlaneExtension.keepLogs(controlPlane(), context);
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
