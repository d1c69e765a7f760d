package io.kipam.system.harness;

import static org.awaitility.Awaitility.await;

import io.kipam.api.Checkpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A kipam program (kipam-node, kipam-operator) running as its own JVM, as in a cluster, so tests
 * can SIGKILL it and start it again. Its output is appended to a log file that failed tests point
 * at. Subclasses say what to run and with which environment; a caller's {@link #withEnv} wins over
 * both.
 *
 * @param <T> the subclass, so that {@link #withEnv} and {@link #start} chain
 */
public abstract class JvmProcess<T extends JvmProcess<T>> implements AutoCloseable {

  public final Path log;
  private final Map<String, String> env = new HashMap<>();
  private Process process;

  public JvmProcess(Path log) {
    this.log = log;
  }

  /** The classpath of the JVM to start. */
  public abstract String classpath() throws IOException;

  public abstract String mainClass();

  /** The environment the program gets before the caller's overrides. */
  public abstract Map<String, String> environment();

  /** JVM options beyond the heap size, as the component's image runs it. */
  public List<String> jvmOptions() {
    return List.of();
  }

  @SuppressWarnings("unchecked")
  private T self() {
    return (T) this;
  }

  /** Sets a variable of the program's environment for its next start. */
  public T withEnv(String name, String value) {
    env.put(name, value);
    return self();
  }

  /** The value the program gets (or got) for {@code name} at its next (or last) start. */
  public String env(String name) {
    return env.getOrDefault(name, environment().get(name));
  }

  /**
   * At its next start the program holds at {@code step} of the release handshake: the thread that
   * reaches it parks for good and says so in {@link #holdFile} (see {@code
   * io.kipam.api.Checkpoint}).
   */
  public T holdAt(String step) {
    withEnv(Checkpoint.HOLD_AT, step);
    return withEnv(Checkpoint.HOLD_FILE, holdFile().toString());
  }

  /** At its next start the program passes every step of the handshake. */
  public T holdNowhere() {
    return withEnv(Checkpoint.HOLD_AT, "");
  }

  /** Waits up to {@code timeout} until the process's log file exists and contains {@code text}. */
  public void awaitLogged(String text, Duration timeout) {
    await()
        .atMost(timeout)
        .alias("\"" + text + "\" in " + log)
        .until(() -> Files.exists(log) && Files.readString(log).contains(text));
  }

  /** Where the program says it holds: {@code KIPAM_HOLD_FILE} if set, else next to its log. */
  public Path holdFile() {
    String file = env(Checkpoint.HOLD_FILE);
    return file == null || file.isEmpty()
        ? log.resolveSibling(log.getFileName() + ".held")
        : Path.of(file);
  }

  /** Waits until the running program holds at {@code step}. */
  public void awaitHeld(String step, Duration timeout) {
    await().atMost(timeout).alias(step + " reached; log " + log).until(() -> held(step));
  }

  /** Whether the running program holds at {@code step} now. */
  public boolean held(String step) throws IOException {
    Path file = holdFile();
    return alive() && Files.exists(file) && Files.readString(file).equals(step);
  }

  /** SIGKILLs the program held at a step and forgets that it was held there. */
  public void killHeld() throws InterruptedException, IOException {
    kill();
    Files.deleteIfExists(holdFile());
  }

  public T start() {
    try {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx256m");
      command.addAll(jvmOptions());
      command.add("-cp");
      command.add(classpath());
      command.add(mainClass());
      ProcessBuilder builder = new ProcessBuilder(command);
      builder.environment().putAll(environment());
      builder.environment().putAll(env);
      process =
          builder
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      return self();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public boolean alive() {
    return process != null && process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /**
   * SIGSTOP: the program stays, holding its connections and its socket, and does nothing at all, as
   * a node under memory pressure or a paused VM. {@link #resume} lets it go on.
   */
  public void pause() throws InterruptedException, IOException {
    signal("STOP");
  }

  /** SIGCONT after {@link #pause}. */
  public void resume() throws InterruptedException, IOException {
    signal("CONT");
  }

  private void signal(String name) throws InterruptedException, IOException {
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid())).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IOException("kill -" + name + " " + pid() + " failed");
    }
  }

  /** SIGKILL: no shutdown hook runs, exactly like a node or a pod losing the process. */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
