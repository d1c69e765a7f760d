package io.kipam.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks a documented {@code ./mvnw} command against the build as it is, without running it (the
 * benchmarks and the whole suite take minutes to tens of minutes): every goal is a lifecycle phase,
 * every {@code -pl} module exists, every {@code -Dtest=} and {@code -Dit.test=} class exists in a
 * module named (or anywhere, without {@code -pl}), every {@code -P} profile is declared in a pom,
 * and every {@code -D} property is one a pom or a source reads, or a test plugin's own. Returns the
 * problems, empty when the command holds.
 */
final class MavenCommandCheck {

  private static final Set<String> PHASES = Set.of("test", "package", "verify", "install");

  /** User properties of Surefire and Failsafe themselves, not of this build. */
  private static final Set<String> PLUGIN_PROPERTIES =
      Set.of(
          "test", "it.test", "surefire.failIfNoSpecifiedTests", "failsafe.failIfNoSpecifiedTests");

  /** A test pattern that names no class: the usual way to run no unit test. */
  private static final String NO_TEST = "NoSuchTest*";

  private static final Pattern POM_PROPERTY_USE = Pattern.compile("\\$\\{([\\w.-]+)}");
  private static final Pattern POM_PROPERTIES =
      Pattern.compile("(?s)<properties>(.*?)</properties>");
  private static final Pattern XML_TAG = Pattern.compile("<([\\w.-]+)>");
  private static final Pattern PROFILE = Pattern.compile("<profile>\\s*<id>([\\w.-]+)</id>");
  private static final Pattern SOURCE_PROPERTY =
      Pattern.compile("(?:getProperty|getBoolean|getLong|getInteger)\\(\\s*\"([\\w.-]+)\"");

  private final Path root;
  private final Set<String> properties = new HashSet<>(PLUGIN_PROPERTIES);
  private final Set<String> profiles = new HashSet<>();

  MavenCommandCheck(Path root) {
    this.root = root;
    for (Path file : files(root, p -> p.getFileName().toString().equals("pom.xml"))) {
      String pom = read(file);
      POM_PROPERTY_USE.matcher(pom).results().forEach(m -> properties.add(m.group(1)));
      POM_PROPERTIES
          .matcher(pom)
          .results()
          .forEach(
              m -> XML_TAG.matcher(m.group(1)).results().forEach(t -> properties.add(t.group(1))));
      PROFILE.matcher(pom).results().forEach(m -> profiles.add(m.group(1)));
    }
    for (Path file : files(root, p -> p.toString().endsWith(".java"))) {
      SOURCE_PROPERTY.matcher(read(file)).results().forEach(m -> properties.add(m.group(1)));
    }
  }

  List<String> problems(String command) {
    List<String> problems = new ArrayList<>();
    List<String> words = List.of(command.split("\\s+"));
    if (!words.get(0).equals("./mvnw")) {
      return List.of("not a ./mvnw command");
    }
    List<String> modules = new ArrayList<>();
    List<String[]> tests = new ArrayList<>();
    for (int i = 1; i < words.size(); i++) {
      String word = words.get(i);
      if (Set.of("-B", "-am", "-amd", "-o", "-q").contains(word)) {
        continue;
      }
      if (word.equals("-pl") && i + 1 < words.size()) {
        for (String module : words.get(++i).split(",")) {
          modules.add(module);
          if (!Files.isRegularFile(root.resolve(module).resolve("pom.xml"))) {
            problems.add("-pl " + module + ": no such module");
          }
        }
      } else if (word.startsWith("-P")) {
        String profile = word.length() > 2 ? word.substring(2) : words.get(++i);
        if (!profiles.contains(profile)) {
          problems.add("-P" + profile + ": no pom declares this profile");
        }
      } else if (word.startsWith("-D")) {
        String[] property = word.substring(2).split("=", 2);
        if (!properties.contains(property[0])) {
          problems.add(word + ": no pom or source reads " + property[0]);
        }
        if ((property[0].equals("test") || property[0].equals("it.test")) && property.length == 2) {
          tests.add(property);
        }
      } else if (!PHASES.contains(word)) {
        problems.add(word + ": not an option or lifecycle phase this check knows");
      }
    }
    for (String[] test : tests) {
      String pattern = test[1].replace("'", "").replace("\"", "");
      if (pattern.equals(NO_TEST)) {
        continue;
      }
      List<Path> dirs =
          modules.isEmpty() ? List.of(root) : modules.stream().map(root::resolve).toList();
      boolean found =
          dirs.stream()
              .anyMatch(
                  dir ->
                      !files(
                              dir,
                              p ->
                                  p.getFileName().toString().equals(pattern + ".java")
                                      && p.toString().contains("/src/test/java/"))
                          .isEmpty());
      if (!found) {
        problems.add("-D" + test[0] + "=" + test[1] + ": no such test class in " + dirs);
      }
    }
    return problems;
  }

  private static List<Path> files(Path dir, Predicate<Path> which) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      return paths
          .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
          .filter(Files::isRegularFile)
          .filter(which)
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot walk " + dir, e);
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
