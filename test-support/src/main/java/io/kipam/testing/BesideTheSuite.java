package io.kipam.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Set;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.ResourceLocksProvider;

/**
 * A test class that runs beside the rest of its module's tests rather than in line with them: it
 * starts with the module's first class, on a thread of its own, while the others run one after the
 * other (the failsafe configuration of the root {@code pom.xml} keeps every other class in line).
 * Its own tests still run one after the other (a lock of the class's own forces them into its
 * thread), so its variants never overlap. For classes that mostly wait (a timer at the product's
 * defaults, a settle, a reuse delay) and share nothing with the classes running meanwhile: they run
 * on a control plane of their own, never the JVM's shared one (docs/development.md, "Waiting beside
 * the suite").
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(providers = BesideTheSuite.OwnLock.class)
public @interface BesideTheSuite {

  /** A lock of the class's own, which keeps its tests in one thread. */
  final class OwnLock implements ResourceLocksProvider {
    @Override
    public Set<Lock> provideForClass(Class<?> testClass) {
      return Set.of(new Lock("beside-the-suite:" + testClass.getName()));
    }
  }
}
