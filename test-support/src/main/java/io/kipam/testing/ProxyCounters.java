package io.kipam.testing;

import io.kipam.testing.FaultProxy.Fault;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** What a {@link FaultProxy} has carried and done so far; safe to update from any thread. */
final class ProxyCounters {

  final LongAdder connections = new LongAdder();
  final LongAdder bytesToServer = new LongAdder();
  final LongAdder bytesToClient = new LongAdder();
  // Filled once here and never changed, so concurrent readers need no lock.
  private final Map<Fault, LongAdder> faults = new EnumMap<>(Fault.class);

  ProxyCounters() {
    for (Fault fault : Fault.values()) {
      faults.put(fault, new LongAdder());
    }
  }

  void injected(Fault fault) {
    faults.get(fault).increment();
  }

  long count(Fault fault) {
    return faults.get(fault).sum();
  }
}
