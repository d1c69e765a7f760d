package io.kipam.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestWatcher;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * JUnit 5 extension behind {@link WithControlPlane}: starts the JVM's shared {@link ControlPlane}
 * before the first test class that needs it, injects it or its administrator {@link
 * KubernetesClient} into test constructors and methods, installs kipam's CRDs for a class that asks
 * ({@link WithControlPlane#crds}) after removing what earlier classes left on it ({@link
 * Leftovers}), and keeps the components' logs of every failed test under {@code
 * target/control-plane-logs/<class>.<method>/}.
 */
public final class ControlPlaneExtension
    implements BeforeAllCallback, BeforeEachCallback, ParameterResolver, TestWatcher {

  @Override
  public void beforeAll(ExtensionContext context) {
    Fixtures.newTestNetwork();
    ControlPlane controlPlane = ControlPlane.shared();
    Leftovers.clear(controlPlane.client());
    boolean crds =
        AnnotationSupport.findAnnotation(context.getRequiredTestClass(), WithControlPlane.class)
            .map(WithControlPlane::crds)
            .orElse(false);
    if (crds) {
      KipamCrds.install(controlPlane.client());
    }
  }

  /** The pools a test method makes share a network of their own: {@link Fixtures#testNetwork}. */
  @Override
  public void beforeEach(ExtensionContext context) {
    Fixtures.newTestNetwork();
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == ControlPlane.class || type == KubernetesClient.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    ControlPlane controlPlane = ControlPlane.shared();
    return parameter.getParameter().getType() == ControlPlane.class
        ? controlPlane
        : controlPlane.client();
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    String label =
        context.getRequiredTestClass().getSimpleName()
            + "."
            + context.getTestMethod().map(m -> m.getName()).orElse("class");
    System.out.println(
        "[control-plane] "
            + label
            + " failed; component logs kept in "
            + ControlPlane.shared().saveLogs(label));
  }
}
