package io.kipam.system.harness;

import io.kipam.testing.ControlPlane;
import io.kipam.testing.KipamCrds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One leading kipam-operator process for the tests of a class, registered as a static {@code
 * RegisterExtension} field: it installs kipam's CRDs, starts before the class's {@code BeforeAll}
 * methods and is stopped after its last test. It marks the pools the tests create Ready ({@link
 * Cluster#poolReadiedByOperator}) and keeps pool status, as in a cluster. It asks for no idle block
 * back (the idle delay is an hour), so a test about the node's own blocks sees only the releases it
 * drives itself; tests about releases start their own operator.
 */
public final class OperatorPerClass implements BeforeAllCallback, AfterAllCallback {

  private static final Duration LEADING_WITHIN = Duration.ofSeconds(90);

  private OperatorProcess operator;
  private ScheduledExecutorService supervisor;
  private boolean stopped;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    ControlPlane controlPlane = ControlPlane.shared();
    KipamCrds.install(controlPlane.client());
    Path dir = Files.createTempDirectory("kipam-operator-" + context.getDisplayName());
    operator = new OperatorProcess(dir, controlPlane.adminKubeconfig(), controlPlane.client());
    operator.startLeading(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), LEADING_WITHIN);
    supervisor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kipam-operator-supervisor");
              t.setDaemon(true);
              return t;
            });
    supervisor.scheduleWithFixedDelay(this::startIfExited, 500, 500, TimeUnit.MILLISECONDS);
  }

  private synchronized void startIfExited() {
    if (!stopped && !operator.alive()) {
      operator.start();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    synchronized (this) {
      stopped = true;
    }
    if (supervisor != null) {
      supervisor.shutdownNow();
    }
    if (operator != null) {
      operator.close();
    }
  }

  /** SIGKILLs the operator; its supervisor starts it again within a second. */
  public void kill() throws InterruptedException {
    operator.kill();
  }

  /** The operator's log, for messages of failed assertions. */
  public Path log() {
    return operator.log;
  }
}
