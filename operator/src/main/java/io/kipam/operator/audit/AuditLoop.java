package io.kipam.operator.audit;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the audit on one thread of its own, first at once and then {@code interval} after the end of
 * each run, so runs never overlap however long one takes. Started when this replica starts to act
 * as leader, stopped when it stops; an audit that fails is logged and the next one runs on time.
 */
public final class AuditLoop implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(AuditLoop.class);

  private final Runnable audit;
  private final Duration interval;
  private final String what;
  private ScheduledExecutorService executor;

  public AuditLoop(Runnable audit, Duration interval) {
    this(audit, interval, "audit of IPAddresses");
  }

  /** A loop of another periodic task, named {@code what} in its thread's logs. */
  public AuditLoop(Runnable audit, Duration interval, String what) {
    this.audit = audit;
    this.interval = interval;
    this.what = what;
  }

  public synchronized void start() {
    if (executor != null) {
      return;
    }
    executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kipam-audit");
              t.setDaemon(true);
              return t;
            });
    executor.scheduleWithFixedDelay(this::runOnce, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    log.info("{} every {} s", what, interval.toSeconds());
  }

  private void runOnce() {
    try {
      audit.run();
    } catch (RuntimeException e) {
      log.warn("{} failed, next in {} s: {}", what, interval.toSeconds(), e.toString());
    }
  }

  @Override
  public synchronized void close() {
    if (executor != null) {
      executor.shutdownNow();
      executor = null;
    }
  }
}
