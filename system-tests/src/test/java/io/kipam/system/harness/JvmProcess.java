package io.kipam.system.harness;

import static org.awaitility.Awaitility.await;

import io.kipam.runtime.Checkpoint;
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

  /** Archives of class data some start of this JVM is writing (see {@link #classDataSharing}). */
  private static final java.util.Set<Path> DUMPING =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final Map<String, String> env = new HashMap<>();
  private final List<String> callerOptions = new ArrayList<>();
  private boolean sharesKipamClassData = true;
  private io.kipam.testing.ImageTarball image;
  private boolean imageCache;
  private long memoryLimit;
  private Path cgroup;
  private Process process;
  private long startedAt;
  private Path dumping;

  public JvmProcess(Path log) {
    this.log = log;
  }

  /** The classpath of the JVM to start. */
  public abstract String classpath() throws IOException;

  public abstract String mainClass();

  /** The environment the program gets before the caller's overrides. */
  public abstract Map<String, String> environment();

  /**
   * Options a maintainer adds to every kipam program a test starts, from the system property {@code
   * kipam.test.jvmOptions} (space-separated; {@code {name}} becomes the log file's name), e.g. a
   * flight recording per process: {@code
   * -Dkipam.test.jvmOptions=-XX:StartFlightRecording=filename=target/{name}.jfr}.
   */
  private List<String> extraOptions() {
    String options = System.getProperty("kipam.test.jvmOptions", "").trim();
    if (options.isEmpty()) {
      return List.of();
    }
    String name = log.getFileName().toString() + "-" + System.nanoTime();
    return List.of(options.replace("{name}", name).split("\\s+"));
  }

  /** JVM options beyond the heap size, as the component's image runs it. */
  public List<String> jvmOptions() {
    return List.of();
  }

  @SuppressWarnings("unchecked")
  private T self() {
    return (T) this;
  }

  /**
   * Adds JVM options for the program's next starts, after the image's and the harness's own (so
   * that they win), e.g. native memory tracking for a benchmark of the program's memory.
   */
  public T withJvmOptions(String... jvmOptions) {
    callerOptions.addAll(List.of(jvmOptions));
    return self();
  }

  /**
   * The program's next starts share class data as in kipam's images, whose jlinked runtime carries
   * the JDK's archive of its own classes and none of kipam's: not the archive of earlier starts
   * ({@link #classDataSharing}). For benchmarks of start-up and memory, which that archive would
   * flatter.
   */
  public T withTheImagesClassData() {
    sharesKipamClassData = false;
    return self();
  }

  /**
   * The program's next starts map a dynamic archive of kipam's own classes, written by an earlier
   * start of the same classpath when it ended normally ({@link #classDataSharing}): what an archive
   * made when the image is built would give.
   */
  public T withKipamClassData() {
    sharesKipamClassData = true;
    return self();
  }

  /**
   * The program's next starts run as its image runs them: the image's runtime (Java 25), jars,
   * entrypoint options and environment, where the image lies unpacked; with the image's AOT cache
   * of its start or without it ({@code -XX:AOTMode=off}). The subclass's environment and the
   * caller's options and variables still apply. For benchmarks of what a node gets.
   */
  public T asImage(io.kipam.testing.ImageTarball image, boolean withItsAotCache) {
    this.image = image;
    this.imageCache = withItsAotCache;
    return self();
  }

  /**
   * The program's next starts run in a memory cgroup of their own, under this JVM's, limited to
   * {@code bytes} as a container's memory limit limits it (the JVM sees the limit, and the kernel
   * reclaims and kills by it); 0 for none. For a benchmark of memory as a DaemonSet's limit leaves
   * it. Needs write access to the cgroup file system (root).
   */
  public T inMemoryCgroup(long bytes) {
    this.memoryLimit = bytes;
    return self();
  }

  /**
   * The cgroup's memory now (of the last start, see {@link #inMemoryCgroup}), in bytes: {@code
   * usage} (resident memory and page cache charged to it) and {@code workingSet}, the usage less
   * inactive file pages, which kubelet compares with the container's limit.
   */
  public Map<String, Long> cgroupMemory() throws IOException {
    boolean v2 = Files.exists(cgroup.resolve("memory.current"));
    long usage =
        Long.parseLong(
            Files.readString(cgroup.resolve(v2 ? "memory.current" : "memory.usage_in_bytes"))
                .trim());
    long inactiveFile = 0;
    for (String line : Files.readAllLines(cgroup.resolve("memory.stat"))) {
      String[] parts = line.split(" ");
      if (parts[0].equals(v2 ? "inactive_file" : "total_inactive_file")) {
        inactiveFile = Long.parseLong(parts[1]);
      }
    }
    return Map.of("usage", usage, "workingSet", usage - inactiveFile);
  }

  /** A new memory cgroup under this JVM's, limited to {@link #memoryLimit}: v1 or v2. */
  private Path newCgroup() throws IOException {
    String v1 = null;
    String v2 = null;
    for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
      String[] parts = line.split(":", 3);
      if (java.util.Arrays.asList(parts[1].split(",")).contains("memory")) {
        v1 = parts[2];
      } else if (parts[0].equals("0") && parts[1].isEmpty()) {
        v2 = parts[2];
      }
    }
    String name = "kipam-" + log.getFileName() + "-" + System.nanoTime();
    Path dir;
    if (v1 != null) {
      dir = Path.of("/sys/fs/cgroup/memory" + v1).resolve(name);
      Files.createDirectory(dir);
      Files.writeString(dir.resolve("memory.limit_in_bytes"), Long.toString(memoryLimit));
    } else {
      dir = Path.of("/sys/fs/cgroup" + v2).resolve(name);
      Files.createDirectory(dir);
      Files.writeString(dir.resolve("memory.max"), Long.toString(memoryLimit));
    }
    return dir;
  }

  /** The program's next starts run on the test's JVM and jars again (see {@link #asImage}). */
  public T notAsImage() {
    this.image = null;
    return self();
  }

  /** The image's entrypoint where it lies unpacked, the harness's and caller's options after it. */
  private List<String> imageCommand() throws IOException {
    List<String> extra = new ArrayList<>(extraOptions());
    extra.addAll(callerOptions);
    return image.unpackedCommand(
        option ->
            !option.startsWith("-XX:AOTCache=")
                ? option
                : imageCache
                    ? "-XX:AOTCache=" + image.file(option.substring("-XX:AOTCache=".length()))
                    : "-XX:AOTMode=off",
        extra);
  }

  /**
   * Sets a variable of the program's environment for its next start; {@code null} leaves it unset,
   * so that the program runs at its own default where the harness would shorten it ({@link
   * io.kipam.testing.ProductDefaults}).
   */
  public T withEnv(String name, String value) {
    env.put(name, value);
    return self();
  }

  /**
   * kipam's settings as the program reads them at its next start: the harness's environment with
   * the caller's {@link #withEnv} over it.
   */
  public Map<String, String> settingsEnvironment() {
    Map<String, String> settings = new HashMap<>(environment());
    io.kipam.testing.ProductDefaults.overlay(settings, env);
    return settings;
  }

  /** The value the program gets (or got) for {@code name} at its next (or last) start. */
  public String env(String name) {
    return env.getOrDefault(name, environment().get(name));
  }

  /**
   * At its next start the program holds at {@code step} of the release handshake: the thread that
   * reaches it parks for good and says so in {@link #holdFile} (see {@code
   * io.kipam.runtime.Checkpoint}).
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
      if (image != null) {
        return launch(imageCommand(), image.unpackedEnvironment());
      }
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-Xmx256m");
      // The collector the JVM picks in kipam's containers, whose memory limits (config/) are
      // below what it takes for a server-class machine; here it would pick G1 and its threads.
      command.add("-XX:+UseSerialGC");
      command.addAll(jvmOptions());
      command.addAll(extraOptions());
      command.addAll(callerOptions);
      String classpath = classpath();
      dumping = null;
      if (sharesKipamClassData) {
        command.addAll(classDataSharing(classpath));
      }
      command.add("-cp");
      command.add(classpath);
      command.add(mainClass());
      return launch(command, Map.of());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private T launch(List<String> command, Map<String, String> base) throws IOException {
    if (memoryLimit > 0) {
      cgroup = newCgroup();
      List<String> inCgroup = new ArrayList<>();
      inCgroup.addAll(
          List.of(
              "/bin/sh",
              "-c",
              "echo $$ > '" + cgroup.resolve("cgroup.procs") + "' && exec \"$@\"",
              "sh"));
      inCgroup.addAll(command);
      command = inCgroup;
    }
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(base);
    builder.environment().putAll(environment());
    io.kipam.testing.ProductDefaults.overlay(builder.environment(), env);
    startedAt = System.nanoTime();
    process =
        builder
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    return self();
  }

  /**
   * The options that let this start share the class data of earlier ones: a suite starts kipam-node
   * and kipam-operator a few hundred times, and loading and verifying the same classes is most of
   * each start's CPU. The first start of a program and classpath writes a dynamic archive when it
   * ends normally ({@link #close}); later starts map it. A start killed before that leaves no
   * archive and the next one tries again; an archive that no longer matches its jars (a rebuild) is
   * never used, since its name is made from their paths, sizes and modification times.
   */
  private List<String> classDataSharing(String classpath) throws IOException {
    Path archive = archiveFor(classpath);
    boolean aot = Runtime.version().feature() >= 25;
    String option;
    if (Files.exists(archive)) {
      option = (aot ? "-XX:AOTCache=" : "-XX:SharedArchiveFile=") + archive;
    } else if (DUMPING.add(archive)) {
      dumping = archive;
      option = (aot ? "-XX:AOTCacheOutput=" : "-XX:ArchiveClassesAtExit=") + partial(archive);
    } else {
      return List.of(); // another start of this JVM writes it
    }
    return aot
        ? List.of(option, "-Xlog:cds=off", "-Xlog:aot=off")
        : List.of(option, "-Xlog:cds=off", "-Xlog:cds+dynamic=off");
  }

  private static Path archiveFor(String classpath) throws IOException {
    StringBuilder key = new StringBuilder(System.getProperty("java.vm.version"));
    for (String entry : classpath.split(java.io.File.pathSeparator)) {
      Path file = Path.of(entry);
      key.append('|').append(entry);
      if (Files.exists(file)) {
        key.append(':')
            .append(Files.size(file))
            .append(':')
            .append(Files.getLastModifiedTime(file));
      }
    }
    Path dir = Path.of("target", "class-data");
    Files.createDirectories(dir);
    return dir.resolve(Integer.toHexString(key.toString().hashCode()) + ".jsa").toAbsolutePath();
  }

  private static Path partial(Path archive) {
    return archive.resolveSibling(archive.getFileName() + ".partial");
  }

  /** Puts the archive this process wrote at exit where later starts find it. */
  private void keepArchive() {
    Path archive = forgetDump();
    if (archive == null) {
      return;
    }
    try {
      if (Files.exists(partial(archive)) && Files.size(partial(archive)) > 0) {
        Files.move(partial(archive), archive, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      }
    } catch (IOException e) {
      // no archive this time: a later start writes one
    }
  }

  /** This process writes no archive any more; the one it was to write, or null. */
  private Path forgetDump() {
    Path archive = dumping;
    if (archive != null) {
      DUMPING.remove(archive);
      dumping = null;
    }
    return archive;
  }

  public boolean alive() {
    return process != null && process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /** {@link System#nanoTime} just before the last start, for a benchmark of start-up. */
  public long startedAt() {
    return startedAt;
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
    forgetDump();
    dropCgroup();
  }

  /** Removes the memory cgroup of an ended start (see {@link #inMemoryCgroup}). */
  private void dropCgroup() {
    if (cgroup != null && !process.isAlive()) {
      try {
        Files.deleteIfExists(cgroup);
        cgroup = null;
      } catch (IOException e) {
        // still in use for a moment: the kernel frees it with the last process
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      keepArchive();
      dropCgroup();
    }
  }
}
