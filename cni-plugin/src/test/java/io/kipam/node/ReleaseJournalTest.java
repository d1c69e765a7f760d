package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.cni.spec.Attachment;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.PoolView;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReleaseJournalTest {

  @TempDir Path dir;

  private static final Instant T0 = Instant.parse("2026-06-01T12:00:00Z");

  private static Ledger ledger(Instant now) {
    Ledger ledger = new Ledger("node-a", Clock.fixed(now, ZoneOffset.UTC));
    ledger.markSynced();
    return ledger;
  }

  @Test
  void aRestartedDaemonStillLetsARecentlyReleasedAddressRest() throws Exception {
    Path file = dir.resolve("released");
    PoolView pool =
        new PoolView(
            "p4",
            PoolLayout.builder().cidr("10.0.0.0/30").blockSize(30).build(),
            Duration.ofSeconds(30),
            0);
    Ledger before = ledger(T0);
    ReleaseJournal journal = ReleaseJournal.attach(file, before, Clock.fixed(T0, ZoneOffset.UTC));
    IpAddress ip = IpAddress.parse("10.0.0.1");
    Lease lease =
        new Lease(
            "p4",
            ip,
            pool.layout().block(java.math.BigInteger.ZERO),
            "node-a",
            "net",
            new Attachment("c1", "eth0"),
            new PodRef("ns", "p", "u"),
            null,
            "uid-1");
    before.leaseSeen(lease);
    before.objectGone(lease.address(), lease.object());
    journal.close();

    Ledger after = ledger(T0.plusSeconds(10));
    ReleaseJournal.attach(file, after, Clock.fixed(T0.plusSeconds(10), ZoneOffset.UTC));
    after
        .blocks()
        .blockClaimed(
            new io.kipam.node.alloc.BlockRef(
                "p4", pool.layout().block(java.math.BigInteger.ZERO), "block-uid"));

    List<IpAddress> offered = new java.util.ArrayList<>();
    after.reserveFree(pool, new Random(1)).ifPresent(p -> offered.add(p.ip()));
    after.reserveFree(pool, new Random(1)).ifPresent(p -> offered.add(p.ip()));
    after.reserveFree(pool, new Random(1)).ifPresent(p -> offered.add(p.ip()));
    // .0 and .3 are the pool's network and broadcast addresses; .1 rests: only .2 is offered.
    assertThat(offered).containsExactly(IpAddress.parse("10.0.0.2"));
  }

  @Test
  void theJournalStaysBoundedHoweverManyReleasesItRecords() throws Exception {
    Path file = dir.resolve("released");
    Ledger ledger = ledger(T0);
    ReleaseJournal journal = ReleaseJournal.attach(file, ledger, Clock.fixed(T0, ZoneOffset.UTC));
    for (int i = 0; i < 50_000; i++) {
      journal.released("p4", IpAddress.parse("10.0.0." + (i % 50)), T0.plusMillis(i));
    }
    journal.close();

    List<String> lines = Files.readAllLines(file);
    assertThat(lines.size()).isLessThanOrEqualTo(ReleaseJournal.COMPACT_AT);
    assertThat(lines).contains((T0.plusMillis(49_999).toEpochMilli()) + " p4 10.0.0.49");
  }

  @Test
  void oldAndTornLinesAreDroppedWhenTheJournalIsRead() throws Exception {
    Path file = dir.resolve("released");
    long old = T0.minus(Duration.ofDays(2)).toEpochMilli();
    long recent = T0.minusSeconds(5).toEpochMilli();
    Files.writeString(
        file,
        old + " p4 10.0.0.1\n" + recent + " p4 10.0.0.2\n" + "17" + "\n",
        StandardCharsets.UTF_8);

    ReleaseJournal.attach(file, ledger(T0), Clock.fixed(T0, ZoneOffset.UTC)).close();

    assertThat(Files.readAllLines(file)).containsExactly(recent + " p4 10.0.0.2");
  }
}
