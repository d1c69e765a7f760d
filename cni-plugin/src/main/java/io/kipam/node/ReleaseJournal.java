package io.kipam.node;

import io.kipam.api.net.IpAddress;
import io.kipam.node.alloc.Ledger;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When this node last released each address, kept in a file of the state directory so that a
 * restarted daemon still lets released addresses rest for their pool's reuse delay. One line per
 * release ({@code <epoch millis> <pool> <address>}), appended as it happens; on start the file is
 * read into the ledger and rewritten without entries older than the longest reuse delay a pool may
 * have (one day).
 */
public final class ReleaseJournal implements Ledger.ReleaseListener {

  private static final Logger log = LoggerFactory.getLogger(ReleaseJournal.class);
  static final Duration KEEP = Duration.ofDays(1);

  private final Path file;

  private ReleaseJournal(Path file) {
    this.file = file;
  }

  /** Reads the journal into {@code ledger}, compacts it, and records future releases in it. */
  public static ReleaseJournal attach(Path file, Ledger ledger, Clock clock) throws IOException {
    Map<String, String> latest = new LinkedHashMap<>();
    Instant horizon = clock.instant().minus(KEEP);
    if (Files.exists(file)) {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      for (String line : lines) {
        String[] parts = line.split(" ");
        try {
          Instant at = Instant.ofEpochMilli(Long.parseLong(parts[0]));
          if (parts.length == 3 && at.isAfter(horizon)) {
            ledger.restoreRelease(parts[1], IpAddress.parse(parts[2]), at);
            latest.put(parts[1] + " " + parts[2], line);
          }
        } catch (RuntimeException e) {
          // A line cut short by a crash; the others still count.
          log.warn("skipping an unreadable line of {}", file);
        }
      }
    }
    Files.createDirectories(file.getParent());
    Path compacted = file.resolveSibling(file.getFileName() + ".new");
    Files.write(compacted, latest.values(), StandardCharsets.UTF_8);
    Files.move(compacted, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    ReleaseJournal journal = new ReleaseJournal(file);
    ledger.onRelease(journal);
    log.info("restored {} recent releases from {}", latest.size(), file);
    return journal;
  }

  @Override
  public void released(String pool, IpAddress ip, Instant at) {
    try {
      Files.writeString(
          file,
          at.toEpochMilli() + " " + pool + " " + ip + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      // Losing the record only weakens the reuse delay after a restart; allocation goes on.
      log.warn("cannot record the release of {} in {}: {}", ip, file, e.toString());
    }
  }
}
