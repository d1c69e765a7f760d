package io.kipam.node.alloc;

import io.kipam.api.net.PoolLayout;
import io.kipam.cni.spec.Attachment;
import io.kipam.node.ReleaseJournal;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Whether kipam-node's memory and its release journal stay flat under churn: 100,000 ADD/DEL cycles
 * of pods in three namespaces against an in-memory store, printing the heap after a full GC, the
 * journal's size on disk and the ledger's record sizes every 10,000 cycles. Nothing is asserted; a
 * row that grows with the cycle count is the finding. Run with {@code ./mvnw -B -pl cni-plugin -am
 * verify -Pbenchmark -DskipIT -DskipE2E -Dit.test=LedgerMemoryBenchmark}.
 */
class LedgerMemoryBenchmark {

  private static final int CYCLES = 100_000;
  private static final int REPORT_EVERY = 10_000;
  private static final int LIVE_PODS = 200;

  @Test
  void heapAndJournalStayFlatOverAHundredThousandAddDelCycles() throws Exception {
    Path dir = Files.createTempDirectory("kipam-memory-benchmark");
    Path journalFile = dir.resolve("released-addresses");
    Clock clock = Clock.systemUTC();
    Ledger ledger = new Ledger("node-a", clock);
    ReleaseJournal journal = ReleaseJournal.attach(journalFile, ledger, clock);
    ledger.markSynced();
    FakeStore store = new FakeStore();
    Allocator allocator = new Allocator(ledger, store, new Random(1));
    // No reuse delay: 100,000 cycles take seconds, and any delay would exhaust the pool.
    PoolView pool =
        new PoolView(
            "p4", PoolLayout.builder().cidr("10.0.0.0/20").blockSize(26).build(), Duration.ZERO, 0);
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    System.out.printf(
        "%8s %12s %14s %8s %10s %8s %10s%n",
        "cycles", "heap MiB", "journal KiB", "leases", "firstSeen", "resting", "tombstones");
    long start = System.nanoTime();
    for (int cycle = 1; cycle <= CYCLES; cycle++) {
      int slot = cycle % LIVE_PODS;
      Attachment attachment = new Attachment("c-" + cycle, "eth0");
      PodRef pod = new PodRef("q" + (cycle % 3), "pod-" + slot, "uid-" + cycle);
      allocator.allocate(AddRequest.dynamic(List.of(pool), attachment, pod, "net", null));
      if (cycle > LIVE_PODS) {
        allocator.release(
            List.of("p4"), new Attachment("c-" + (cycle - LIVE_PODS), "eth0"), Optional.empty());
      }
      if (cycle % REPORT_EVERY == 0) {
        System.gc();
        Thread.sleep(300); // let the journal's writer catch up before its size is read
        var sizes = ledger.sizes();
        System.out.printf(
            "%8d %12.1f %14.1f %8d %10d %8d %10d%n",
            cycle,
            memory.getHeapMemoryUsage().getUsed() / 1048576.0,
            Files.size(journalFile) / 1024.0,
            sizes.get("holders"),
            sizes.get("firstSeen"),
            sizes.get("resting"),
            sizes.get("tombstones"));
      }
    }
    journal.close();
    System.out.printf(
        "%d ADD/DEL cycles in %.1f s (%d writes to the store)%n",
        CYCLES, (System.nanoTime() - start) / 1e9, store.writes.get());
  }
}
