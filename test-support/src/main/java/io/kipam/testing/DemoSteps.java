package io.kipam.testing;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;

/**
 * The steps of a demo the README runs ({@code ./kipam-demo}): the step under way, a progress line
 * with the seconds since the script began, and the exit code, with one line naming the step that
 * failed.
 */
public final class DemoSteps {

  /** Seconds the script spent before this JVM started (the build), so times run on. */
  private static final long OFFSET_SECONDS = Long.getLong("kipam.demo.offset", 0);

  private final long started = System.nanoTime();
  private String step = "starting";

  /** The demo's steps, run in order; a step that fails throws. */
  public interface Body {
    void run() throws Exception;
  }

  /** The directory the script gives the demo for everything it starts ({@code kipam.demo.dir}). */
  public static Path dir() {
    return Path.of(System.getProperty("kipam.demo.dir"));
  }

  /**
   * Runs {@code demo} with {@code stopAll} as the JVM's shutdown hook, so that what it started
   * stops on exit and on Ctrl-C, then exits with the demo's code.
   */
  public static void exitWith(Runnable stopAll, IntSupplier demo) {
    Runtime.getRuntime().addShutdownHook(new Thread(stopAll, "kipam-demo-cleanup"));
    System.exit(demo.getAsInt());
  }

  /** Names the step that runs now, for the line that says it failed. */
  public void step(String what) {
    step = what;
  }

  /** Prints {@code what} after the seconds since the script began. */
  public void progress(String what) {
    double seconds = OFFSET_SECONDS + (System.nanoTime() - started) / 1e9;
    System.out.printf("[%6.1fs] %s%n", seconds, what);
  }

  /**
   * Runs {@code body}: 0 when every step held, 130 when interrupted, 1 after a line naming the
   * failed step, the first line of its failure and, in parentheses, {@code logs}.
   */
  public int run(Body body, String logs) {
    try {
      body.run();
      progress("done; stopping everything the demo started");
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 130;
    } catch (Exception | AssertionError e) {
      System.out.println(
          "kipam-demo: FAILED while " + step + ": " + firstLine(e) + " (" + logs + ")");
      return 1;
    }
  }

  /** Waits, polling every 500 ms, until {@code count} is {@code expected}; null counts as none. */
  public static void awaitCount(Duration within, Supplier<Long> count, long expected) {
    Awaitility.await()
        .atMost(within)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> Objects.equals(count.get(), expected));
  }

  /**
   * Keeps the cluster up until Ctrl-C, after saying how to explore it: {@code kubeconfig} and a
   * first command.
   */
  public void stayUp(Object kubeconfig, String firstCommand) throws InterruptedException {
    step("staying up");
    System.out.println("The cluster stays up until Ctrl-C. Explore it with:");
    System.out.println("  export KUBECONFIG=" + kubeconfig);
    System.out.println("  " + firstCommand);
    new CountDownLatch(1).await();
  }

  /** The first line of {@code e}'s message, or its class's name when it has none. */
  public static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }
}
