package io.kipam.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test class against the JVM's real control plane: parameters of type {@link ControlPlane}
 * or {@code KubernetesClient} are injected, and a failed test keeps the component logs.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(ControlPlaneExtension.class)
public @interface WithControlPlane {

  /** Whether kipam's CRDs ({@link KipamCrds#install}) are installed before the class's tests. */
  boolean crds() default false;
}
