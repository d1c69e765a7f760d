package io.kipam.node;

import io.kipam.api.net.IpAddress;
import io.kipam.node.alloc.Ledger;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When this node last released each address, kept in a file of the state directory so that a
 * restarted daemon still lets released addresses rest for their pool's reuse delay. One line per
 * release ({@code <epoch millis> <pool> <address>}).
 *
 * <p>Releases are handed to a writer thread of the journal's own, so no file is written on the
 * allocation path or under the ledger's monitor. The file stays bounded: once it has grown to twice
 * the addresses it needs to remember (and at least {@link #COMPACT_AT} lines), it is rewritten with
 * one line per address released within the longest reuse delay a pool may have (one day). If
 * releases come faster than the disk takes them, the oldest unwritten ones are dropped with a
 * warning: losing one only shortens a reuse delay after a restart.
 */
public final class ReleaseJournal implements Ledger.ReleaseListener, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ReleaseJournal.class);
  static final Duration KEEP = Duration.ofDays(1);
  static final int COMPACT_AT = 4096;
  private static final int QUEUE = 65_536;

  private final Path file;
  private final Clock clock;
  private final BlockingQueue<String> pending = new ArrayBlockingQueue<>(QUEUE);
  private final Map<String, Long> latest;
  private final Thread writer;
  private int lines;
  private volatile boolean closed;

  private ReleaseJournal(Path file, Clock clock, Map<String, Long> latest) {
    this.file = file;
    this.clock = clock;
    this.latest = latest;
    this.lines = latest.size();
    this.writer = new Thread(this::writeLoop, "kipam-release-journal");
    writer.setDaemon(true);
  }

  /** Reads the journal into {@code ledger}, compacts it, and records future releases in it. */
  public static ReleaseJournal attach(Path file, Ledger ledger, Clock clock) throws IOException {
    Map<String, Long> latest = new LinkedHashMap<>();
    long horizon = clock.instant().minus(KEEP).toEpochMilli();
    if (Files.exists(file)) {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        String[] parts = line.split(" ");
        try {
          long at = Long.parseLong(parts[0]);
          if (parts.length == 3 && at > horizon) {
            ledger.restoreRelease(parts[1], IpAddress.parse(parts[2]), Instant.ofEpochMilli(at));
            latest.merge(parts[1] + " " + parts[2], at, Math::max);
          }
        } catch (RuntimeException e) {
          // A line cut short by a crash; the others still count.
          log.warn("skipping an unreadable line of {}", file);
        }
      }
    }
    Files.createDirectories(file.getParent());
    ReleaseJournal journal = new ReleaseJournal(file, clock, latest);
    journal.compact();
    journal.writer.start();
    ledger.onRelease(journal);
    log.info("restored {} recent releases from {}", latest.size(), file);
    return journal;
  }

  @Override
  public void released(String pool, IpAddress ip, Instant at) {
    String line = at.toEpochMilli() + " " + pool + " " + ip;
    while (!pending.offer(line)) {
      if (pending.poll() != null) {
        log.warn("the release journal {} falls behind; dropping its oldest unwritten entry", file);
      }
    }
  }

  private void writeLoop() {
    List<String> batch = new ArrayList<>();
    while (!closed || !pending.isEmpty()) {
      try {
        String first = pending.poll(200, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        batch.add(first);
        pending.drainTo(batch);
        append(batch);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException e) {
        // Losing records only weakens reuse delays after a restart; allocation goes on.
        log.warn("cannot record releases in {}: {}", file, e.toString());
      }
      batch.clear();
    }
  }

  private void append(List<String> batch) throws IOException {
    try (Writer out =
        Files.newBufferedWriter(
            file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      for (String line : batch) {
        out.write(line);
        out.write('\n');
        int space = line.indexOf(' ');
        latest.put(line.substring(space + 1), Long.parseLong(line.substring(0, space)));
      }
    }
    lines += batch.size();
    if (lines >= Math.max(COMPACT_AT, 2 * latest.size())) {
      compact();
    }
  }

  /** Rewrites the file with the latest release of each address still within {@link #KEEP}. */
  private void compact() throws IOException {
    long horizon = clock.instant().minus(KEEP).toEpochMilli();
    latest.values().removeIf(at -> at <= horizon);
    List<String> kept = new ArrayList<>(latest.size());
    latest.forEach((address, at) -> kept.add(at + " " + address));
    Path compacted = file.resolveSibling(file.getFileName() + ".new");
    Files.write(compacted, kept, StandardCharsets.UTF_8);
    Files.move(compacted, file, StandardCopyOption.ATOMIC_MOVE);
    lines = kept.size();
  }

  /** Writes what is pending and stops the writer. */
  @Override
  public void close() throws InterruptedException {
    closed = true;
    writer.join(TimeUnit.SECONDS.toMillis(10));
  }
}
