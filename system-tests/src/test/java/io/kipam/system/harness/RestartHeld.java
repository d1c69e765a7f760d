package io.kipam.system.harness;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * While a test drives its pods, SIGKILLs every kipam process it finds held at its {@link
 * io.kipam.runtime.Checkpoint} step and starts it again without a hold, as a Deployment or
 * DaemonSet would: the operator at {@code operatorStep}, each node's daemon at {@code daemonStep}.
 * Daemons are started again in parallel, each on a thread of its own. {@link #close} stops looking
 * and waits for the restarts under way.
 */
public final class RestartHeld implements AutoCloseable {

  private final OperatorProcess operator;
  private final String operatorStep;
  private final List<NodeRig> rigs;
  private final String daemonStep;
  private final Duration within;
  private final ExecutorService restarts = Executors.newCachedThreadPool();
  private final Set<String> restarting = ConcurrentHashMap.newKeySet();
  private final Set<String> daemonsKilled = ConcurrentHashMap.newKeySet();
  private final AtomicInteger operatorKills = new AtomicInteger();
  private final Future<?> looking;
  private volatile boolean open = true;

  public RestartHeld(
      OperatorProcess operator,
      String operatorStep,
      List<NodeRig> rigs,
      String daemonStep,
      Duration within) {
    this.operator = operator;
    this.operatorStep = operatorStep;
    this.rigs = rigs;
    this.daemonStep = daemonStep;
    this.within = within;
    this.looking = restarts.submit(this::look);
  }

  private Void look() throws Exception {
    while (open) {
      if (operatorStep != null && operator.held(operatorStep)) {
        operator.killHeld();
        operatorKills.incrementAndGet();
        operator.holdNowhere().restart().awaitLeader(within);
      }
      for (NodeRig rig : rigs) {
        if (daemonStep != null && !restarting.contains(rig.node) && rig.daemon.held(daemonStep)) {
          restarting.add(rig.node);
          restarts.submit(
              () -> {
                rig.daemon.killHeld();
                daemonsKilled.add(rig.node);
                rig.daemon.holdNowhere();
                rig.restart();
                restarting.remove(rig.node);
                return null;
              });
        }
      }
      Thread.sleep(100);
    }
    return null;
  }

  /** How many times the operator was SIGKILLed at its step. */
  public int operatorKills() {
    return operatorKills.get();
  }

  /** The nodes whose daemon was SIGKILLed at its step. */
  public Set<String> daemonsKilled() {
    return daemonsKilled;
  }

  @Override
  public void close() throws Exception {
    open = false;
    looking.get(within.toSeconds(), TimeUnit.SECONDS);
    restarts.shutdown();
    if (!restarts.awaitTermination(within.toSeconds(), TimeUnit.SECONDS)) {
      throw new IllegalStateException("daemons still starting after " + within);
    }
  }
}
