package io.kipam.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A testing hook that lets a test stop kipam-operator or kipam-node at a named step of the block
 * release handshake (or of another exchange about a block) and SIGKILL it exactly there. Off unless
 * the environment says otherwise: {@link #reach} does nothing unless {@code KIPAM_HOLD_AT} names
 * the step reached. Then the step's name is written (atomically) into the file {@code
 * KIPAM_HOLD_FILE} names, and the calling thread parks for good: what the step was about to do next
 * never happens in this process. The environment is read once, when the class is loaded. {@code
 * KIPAM_HOLD_POOL}, when set, narrows the hold to the blocks of that pool: a cluster holds other
 * pools whose blocks reach the same steps. {@code KIPAM_HOLD_MILLIS}, when set, makes the hold a
 * pause instead: the thread waits that long and goes on, each time the step is reached, so a test
 * can change the cluster under a decision already taken and see what the program does next.
 *
 * <p>The steps, in handshake order: {@code operator-asked} (Requested written), {@code
 * daemon-closed} (block closed, Ready decided, not yet written), {@code daemon-answered} (Ready
 * written), {@code operator-reread} (fresh read and LIST passed, block not yet deleted), {@code
 * operator-deleting} (block deleted, its finalizer not yet removed). Of a slot's conversion to
 * Shared: {@code operator-share-deciding} (the slot chosen from the operator's cache, {@code
 * status.share} not yet written), {@code operator-share-asked} ({@code status.share} written, the
 * Event not yet), {@code daemon-subclaimed} (the holder made a sub-claim of one of its addresses,
 * the mode not yet written). Of a block going back: {@code daemon-giving-back} (the block is
 * retired on its node, for a host-prefix block after its address rested, and not yet deleted).
 *
 * <p>It lives with the other code both processes run with, not in {@code api}: it reads the
 * environment and parks threads, which the resource types and address math have no business doing.
 */
public final class Checkpoint {

  public static final String HOLD_AT = "KIPAM_HOLD_AT";
  public static final String HOLD_FILE = "KIPAM_HOLD_FILE";
  public static final String HOLD_POOL = "KIPAM_HOLD_POOL";
  public static final String HOLD_MILLIS = "KIPAM_HOLD_MILLIS";

  private static final Checkpoint PROCESS = fromEnv(System.getenv());

  private final String holdAt;
  private final Path holdFile;
  private final String holdPool;
  private final long pauseMillis;

  Checkpoint(String holdAt, Path holdFile, String holdPool) {
    this(holdAt, holdFile, holdPool, 0);
  }

  Checkpoint(String holdAt, Path holdFile, String holdPool, long pauseMillis) {
    this.holdAt = holdAt;
    this.holdFile = holdFile;
    this.holdPool = holdPool;
    this.pauseMillis = pauseMillis;
  }

  static Checkpoint fromEnv(Map<String, String> env) {
    String at = env.get(HOLD_AT);
    String file = env.get(HOLD_FILE);
    if (at == null || at.isBlank()) {
      return new Checkpoint(null, null, null);
    }
    if (file == null || file.isBlank()) {
      throw new IllegalStateException(HOLD_AT + " is set but " + HOLD_FILE + " is not");
    }
    String pool = env.get(HOLD_POOL);
    String millis = env.get(HOLD_MILLIS);
    long pause;
    try {
      pause = millis == null || millis.isBlank() ? 0 : Long.parseLong(millis.trim());
    } catch (NumberFormatException e) {
      throw new IllegalStateException(
          HOLD_MILLIS + " must be a whole number of milliseconds, not '" + millis + "'", e);
    }
    if (pause < 0) {
      throw new IllegalStateException(HOLD_MILLIS + " must not be negative, not " + pause);
    }
    return new Checkpoint(
        at.trim(), Path.of(file), pool == null || pool.isBlank() ? null : pool.trim(), pause);
  }

  /**
   * The step {@code name} is reached for a block of {@code pool}: parks the calling thread for good
   * if it is the one held.
   */
  public static void reach(String name, String pool) {
    PROCESS.arrive(name, pool);
  }

  void arrive(String name, String pool) {
    if (holdAt == null || !holdAt.equals(name) || holdPool != null && !holdPool.equals(pool)) {
      return;
    }
    try {
      Path next = holdFile.resolveSibling(holdFile.getFileName() + ".new");
      Files.writeString(next, name, StandardCharsets.UTF_8);
      Files.move(next, holdFile, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (pauseMillis > 0) {
      long until = System.nanoTime() + pauseMillis * 1_000_000;
      for (long left = pauseMillis * 1_000_000; left > 0; left = until - System.nanoTime()) {
        LockSupport.parkNanos(this, left);
      }
      return;
    }
    while (true) {
      LockSupport.park(this);
      // An interrupt does not end the hold; only the process's end does. Clear it, or every later
      // park returns at once and the held thread spins instead of waiting.
      Thread.interrupted();
    }
  }
}
