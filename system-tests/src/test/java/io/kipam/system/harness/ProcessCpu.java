package io.kipam.system.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a benchmark's CPU went, from /proc: the CPU seconds of named groups of processes and how
 * busy the whole machine was. A snapshot is taken before and after a phase; {@link #since} gives
 * the difference. Linux counts 100 ticks a second in /proc/PID/stat and /proc/stat.
 */
public final class ProcessCpu {

  private static final Pattern PEAK_RSS = Pattern.compile("VmHWM:\\s+(\\d+) kB");

  /** The process groups to account for, by name, in the order they are reported. */
  private final Map<String, List<Long>> groups;

  public ProcessCpu(Map<String, List<Long>> groups) {
    this.groups = new LinkedHashMap<>(groups);
  }

  /**
   * CPU seconds per group, this JVM's own and its reaped children's ("caller"), and the machine.
   */
  public record Snapshot(Map<String, Double> seconds, double machineBusy) {}

  /** What the groups and the machine used between {@code before} and now. */
  public record Usage(Map<String, Double> seconds, double busyCores, double wallSeconds) {
    /** One line: the machine's busy cores and each group's CPU seconds. */
    public String describe() {
      StringBuilder out =
          new StringBuilder(
              String.format(
                  "machine %.2f of %d cores busy over %.1f s;",
                  busyCores, Runtime.getRuntime().availableProcessors(), wallSeconds));
      seconds.forEach((group, s) -> out.append(String.format(" %s %.1f s", group, s)));
      return out.toString();
    }
  }

  public Snapshot snapshot() {
    Map<String, Double> seconds = new LinkedHashMap<>();
    groups.forEach((group, pids) -> seconds.put(group, cpuSeconds(pids, false)));
    seconds.put(
        "caller and the plugins it ran", cpuSeconds(List.of(ProcessHandle.current().pid()), true));
    return new Snapshot(seconds, machineBusyTicks() / 100.0);
  }

  public Usage since(Snapshot before, double wallSeconds) {
    Snapshot now = snapshot();
    Map<String, Double> delta = new LinkedHashMap<>();
    now.seconds().forEach((g, s) -> delta.put(g, s - before.seconds().getOrDefault(g, 0.0)));
    double busy = now.machineBusy() - before.machineBusy();
    return new Usage(delta, wallSeconds > 0 ? busy / wallSeconds : 0, wallSeconds);
  }

  /**
   * User and system CPU seconds of the processes; with {@code children} also those of their
   * children that have been waited for (the executables a caller spawned). A process that has
   * exited counts nothing.
   */
  public static double cpuSeconds(List<Long> pids, boolean children) {
    double ticks = 0;
    for (long pid : pids) {
      try {
        String[] fields =
            fieldsAfterName(Files.readString(Path.of("/proc", String.valueOf(pid), "stat")));
        ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        if (children) {
          ticks += Long.parseLong(fields[13]) + Long.parseLong(fields[14]);
        }
      } catch (IOException e) {
        // gone: nothing to add
      }
    }
    return ticks / 100;
  }

  /**
   * CPU seconds of each of a process's live threads, summed by thread name with its digits left out
   * ("C1 CompilerThre", "kipam-node-cni-", "VM Thread", ...): what a JVM spends compiling,
   * collecting and running calls. Threads that have ended count nothing.
   */
  public static Map<String, Double> byThread(long pid) {
    Map<String, Double> seconds = new java.util.TreeMap<>();
    try (var tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          String[] fields = fieldsAfterName(stat);
          double used = (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0;
          seconds.merge(name.replaceAll("[0-9]+", "").trim(), used, Double::sum);
        } catch (IOException e) {
          // the thread ended
        }
      }
    } catch (IOException e) {
      // the process is gone
    }
    return seconds;
  }

  /**
   * The parts of the process's resident memory (/proc status): anonymous (heap, stacks, malloc,
   * what the process itself made), file-backed (mapped executables, libraries, class-data archive
   * and the runtime's modules, shared with other processes that map them) and shared.
   */
  public static String residentParts(long pid) {
    try {
      String status = Files.readString(Path.of("/proc", String.valueOf(pid), "status"));
      StringBuilder parts = new StringBuilder("resident memory by kind:");
      for (String kind : List.of("RssAnon", "RssFile", "RssShmem")) {
        Matcher m = Pattern.compile(kind + ":\\s+(\\d+) kB").matcher(status);
        if (m.find()) {
          parts.append(String.format(" %s %.0f MiB;", kind, Long.parseLong(m.group(1)) / 1024.0));
        }
      }
      return parts.toString();
    } catch (IOException e) {
      return "resident memory by kind: the process is gone";
    }
  }

  /** How many threads the process has, by name with its digits left out, most first. */
  public static Map<String, Integer> threadCounts(long pid) {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    try (var tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String name = Files.readString(task.resolve("comm")).strip();
          counts.merge(name.replaceAll("[0-9]+", "").trim(), 1, Integer::sum);
        } catch (IOException e) {
          // the thread ended
        }
      }
    } catch (IOException e) {
      // the process is gone
    }
    Map<String, Integer> sorted = new java.util.LinkedHashMap<>();
    counts.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .forEach(e -> sorted.put(e.getKey(), e.getValue()));
    return sorted;
  }

  /**
   * The fields of a {@code /proc/.../stat} line after the name (which may hold spaces and
   * parentheses): index 11 and 12 are user and system ticks, 13 and 14 those of waited-for
   * children.
   */
  private static String[] fieldsAfterName(String stat) {
    return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
  }

  /** Each process's peak resident memory (VmHWM), as "N MiB". */
  public static List<String> peakRss(List<Long> pids) {
    List<String> peaks = new ArrayList<>();
    for (long pid : pids) {
      try {
        Matcher m =
            PEAK_RSS.matcher(Files.readString(Path.of("/proc", String.valueOf(pid), "status")));
        peaks.add(m.find() ? Long.parseLong(m.group(1)) / 1024 + " MiB" : "?");
      } catch (IOException e) {
        peaks.add("gone");
      }
    }
    return peaks;
  }

  /** A process's resident memory now (VmRSS) in MiB; NaN when it is gone. */
  public static double rssMiB(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    } catch (IOException e) {
      return Double.NaN;
    }
    return Double.NaN;
  }

  /** The machine's busy ticks over all cores since boot (/proc/stat's "cpu" line). */
  private static long machineBusyTicks() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long busy = 0;
      for (int i = 1; i < f.length; i++) {
        busy += i == 4 || i == 5 ? 0 : Long.parseLong(f[i]); // all but idle and iowait
      }
      return busy;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
