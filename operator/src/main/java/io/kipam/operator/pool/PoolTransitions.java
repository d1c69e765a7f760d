package io.kipam.operator.pool;

import io.fabric8.kubernetes.api.model.Condition;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.operator.kube.EventRecorder;
import java.util.List;
import java.util.Optional;

/**
 * An Event for every change of a pool's verdict: {@code Ready} (or why not: {@code Overlap} naming
 * the older pool, {@code Invalid}, {@code Terminating}) and {@code Exhausted} turning on or off.
 * Called only after a status write, with the status it replaced, so each change is reported once.
 */
final class PoolTransitions {

  private final EventRecorder events;

  PoolTransitions(EventRecorder events) {
    this.events = events;
  }

  void report(IPPool pool, IPPoolStatus before, IPPoolStatus after) {
    List<Condition> old = before == null ? List.of() : before.getConditions();
    Condition ready = Conditions.find(after.getConditions(), PoolStatusCalculator.READY).get();
    Optional<Condition> wasReady = Conditions.find(old, PoolStatusCalculator.READY);
    boolean readyChanged =
        wasReady.isEmpty()
            || !wasReady.get().getStatus().equals(ready.getStatus())
            || !wasReady.get().getReason().equals(ready.getReason())
            || (PoolStatusCalculator.REASON_OVERLAP.equals(ready.getReason())
                && !wasReady.get().getMessage().equals(ready.getMessage()));
    if (readyChanged) {
      boolean ok = Conditions.TRUE.equals(ready.getStatus());
      boolean terminating = PoolStatusCalculator.REASON_TERMINATING.equals(ready.getReason());
      events.record(
          pool,
          ok || terminating ? EventRecorder.Type.Normal : EventRecorder.Type.Warning,
          ok ? "Ready" : ready.getReason(),
          ready.getMessage());
    }
    Condition exhausted =
        Conditions.find(after.getConditions(), PoolStatusCalculator.EXHAUSTED).get();
    Conditions.find(old, PoolStatusCalculator.EXHAUSTED)
        .filter(was -> !was.getStatus().equals(exhausted.getStatus()))
        .ifPresent(
            was -> {
              boolean now = Conditions.TRUE.equals(exhausted.getStatus());
              events.record(
                  pool,
                  now ? EventRecorder.Type.Warning : EventRecorder.Type.Normal,
                  now ? "Exhausted" : "AddressesAvailable",
                  exhausted.getMessage());
            });
  }

  /** The conditions in one line, for the log. */
  static String summary(IPPoolStatus status) {
    StringBuilder out = new StringBuilder();
    for (Condition c : status.getConditions()) {
      out.append(out.isEmpty() ? "" : ", ")
          .append(c.getType())
          .append('=')
          .append(c.getStatus())
          .append(" (")
          .append(c.getReason())
          .append(')');
    }
    return out.toString();
  }
}
