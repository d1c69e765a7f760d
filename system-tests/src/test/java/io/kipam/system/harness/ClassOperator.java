package io.kipam.system.harness;

import io.kipam.testing.ControlPlane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One leading kipam-operator process for the tests of a class ({@link SystemTest#withOperator}): it
 * marks the pools the tests create Ready ({@link Cluster#poolReadiedByOperator}) and keeps pool
 * status, as in a cluster, and asks for no idle block back (the idle delay is an hour). A
 * supervisor starts it again within a second when a test kills it.
 */
final class ClassOperator implements AutoCloseable {

  private static final Duration LEADING_WITHIN = Duration.ofSeconds(90);

  private final OperatorProcess operator;
  private final ScheduledExecutorService supervisor;
  private boolean stopped;

  private ClassOperator(OperatorProcess operator) {
    this.operator = operator;
    this.supervisor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kipam-operator-supervisor");
              t.setDaemon(true);
              return t;
            });
    supervisor.scheduleWithFixedDelay(this::startIfExited, 500, 500, TimeUnit.MILLISECONDS);
  }

  /** Starts the operator on the shared control plane and waits until it leads. */
  static ClassOperator start(String className) throws IOException {
    ControlPlane controlPlane = ControlPlane.shared();
    Path dir = Files.createTempDirectory("kipam-operator-" + className);
    OperatorProcess operator =
        new OperatorProcess(dir, controlPlane.adminKubeconfig(), controlPlane.client());
    operator.startLeading(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), LEADING_WITHIN);
    return new ClassOperator(operator);
  }

  private synchronized void startIfExited() {
    if (!stopped && !operator.alive()) {
      operator.start();
    }
  }

  /** SIGKILLs the operator; its supervisor starts it again within a second. */
  void kill() throws InterruptedException {
    operator.kill();
  }

  Path log() {
    return operator.log;
  }

  @Override
  public void close() throws Exception {
    synchronized (this) {
      stopped = true;
    }
    supervisor.shutdownNow();
    operator.close();
  }
}
