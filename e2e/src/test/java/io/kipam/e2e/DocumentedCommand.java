package io.kipam.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A command the README or a page of {@code docs/} shows, where it is, and the output the page shows
 * after it (empty when none). Commands are every line of a fenced block tagged {@code sh} and every
 * line starting with {@code $ } inside any other fenced block; a line ending in {@code \} goes on
 * with the next, a trailing {@code # comment} and blank lines are dropped. Inline code spans in
 * prose are names, not commands, and are not collected.
 */
record DocumentedCommand(String file, int line, String command, List<String> shownOutput) {

  private static final Pattern FENCE = Pattern.compile("^\\s*(```+|~~~+)\\s*(\\S*).*$");
  private static final Pattern TRAILING_COMMENT = Pattern.compile("\\s+#.*$");

  /** How a command a reader runs begins; prose and example output do not begin so. */
  private static final Pattern COMMAND_START =
      Pattern.compile("^(kubectl|helm|\\./|mvn|java|ctr|docker|podman|grep|sudo|hack/)\\b.*");

  String where() {
    return file + ":" + line;
  }

  /** The commands of README.md and docs/*.md under {@code root}, in file and line order. */
  static List<DocumentedCommand> collect(Path root) {
    List<DocumentedCommand> commands = new ArrayList<>();
    for (Path file : pages(root)) {
      try {
        commands.addAll(inFile(root.relativize(file).toString(), Files.readAllLines(file)));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + file, e);
      }
    }
    return commands;
  }

  /**
   * Lines of README.md and docs/*.md that look like a command (see {@link #COMMAND_START}) in a
   * fenced block not tagged {@code sh} and not after {@code $ }: commands this class would miss.
   */
  static List<String> commandsOutsideShellBlocks(Path root) {
    List<String> found = new ArrayList<>();
    for (Path file : pages(root)) {
      List<String> lines;
      try {
        lines = Files.readAllLines(file);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + file, e);
      }
      String tag = null;
      boolean prompted = false;
      for (int i = 0; i < lines.size(); i++) {
        Matcher fence = FENCE.matcher(lines.get(i));
        if (fence.matches()) {
          tag = tag == null ? fence.group(2) : null;
          prompted = tag != null && promptedBlock(lines, i + 1);
        } else if (tag != null
            && !tag.equals("sh")
            && !prompted
            && COMMAND_START.matcher(lines.get(i).strip()).matches()) {
          found.add(root.relativize(file) + ":" + (i + 1) + "  " + lines.get(i).strip());
        }
      }
    }
    return found;
  }

  /**
   * Whether the fenced block starting at line {@code from} shows its commands after {@code $ }:
   * then its other lines are what they printed, even one that starts like a command (a tool's error
   * message names the tool).
   */
  private static boolean promptedBlock(List<String> lines, int from) {
    for (int i = from; i < lines.size() && !FENCE.matcher(lines.get(i)).matches(); i++) {
      if (lines.get(i).startsWith("$ ")) {
        return true;
      }
    }
    return false;
  }

  private static List<Path> pages(Path root) {
    List<Path> files = new ArrayList<>(List.of(root.resolve("README.md")));
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list docs/", e);
    }
    return files;
  }

  static List<DocumentedCommand> inFile(String file, List<String> lines) {
    List<DocumentedCommand> commands = new ArrayList<>();
    String tag = null; // null: outside a fenced block
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      Matcher fence = FENCE.matcher(line);
      if (fence.matches()) {
        tag = tag == null ? fence.group(2) : null;
        continue;
      }
      if (tag == null) {
        continue;
      }
      boolean shell = tag.equals("sh");
      String stripped = line.strip();
      if (!shell && !stripped.startsWith("$ ")) {
        continue;
      }
      int first = i;
      StringBuilder command = new StringBuilder(shell ? stripped : stripped.substring(2).strip());
      while (command.toString().endsWith("\\") && i + 1 < lines.size()) {
        String head = command.substring(0, command.length() - 1).stripTrailing();
        command.setLength(0);
        command.append(head).append(' ').append(lines.get(++i).strip());
      }
      String text = TRAILING_COMMENT.matcher(command.toString()).replaceFirst("").strip();
      if (text.isEmpty() || text.startsWith("#")) {
        continue;
      }
      List<String> output = new ArrayList<>();
      if (!shell) {
        for (int j = i + 1; j < lines.size(); j++) {
          String next = lines.get(j).strip();
          if (next.isEmpty() || next.startsWith("$ ") || FENCE.matcher(lines.get(j)).matches()) {
            break;
          }
          output.add(next);
        }
      }
      commands.add(new DocumentedCommand(file, first + 1, text, List.copyOf(output)));
    }
    return commands;
  }
}
