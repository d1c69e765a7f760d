package io.kipam.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;

/**
 * An image as {@code jib:buildTar} writes it (a docker-archive: {@code manifest.json}, the config
 * JSON and one gzipped tar per layer), unpacked: its manifest, its config and its file system with
 * the layers applied in order under a directory of the caller's. Reads the tar format Jib writes
 * (ustar with PAX headers), nothing more.
 */
public record ImageTarball(JsonNode manifest, JsonNode config, Path root) {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Unpacks {@code tarball} under {@code into}: its archive and its layers' file system. */
  public static ImageTarball unpack(Path tarball, Path into) throws IOException {
    Path archive = Files.createDirectories(into.resolve("archive"));
    try (InputStream in = Files.newInputStream(tarball)) {
      new TarReader(in).extractTo(archive);
    }
    JsonNode manifest = JSON.readTree(archive.resolve("manifest.json").toFile()).get(0);
    JsonNode config = JSON.readTree(archive.resolve(manifest.get("Config").asText()).toFile());
    Path root = Files.createDirectories(into.resolve("root"));
    for (JsonNode layer : manifest.get("Layers")) {
      try (InputStream in =
          new GZIPInputStream(Files.newInputStream(archive.resolve(layer.asText())))) {
        new TarReader(in).extractTo(root);
      }
    }
    return new ImageTarball(manifest, config, root);
  }

  /**
   * The image's classpath ({@code /app/jib-classpath-file}) with each entry where it lies unpacked,
   * joined with ':' for {@code -cp}: a JVM maps an AOT cache made for the image's paths from
   * another directory holding the same jars.
   */
  public String unpackedClasspath() throws IOException {
    String file = Files.readString(file("/app/jib-classpath-file"), StandardCharsets.UTF_8);
    StringBuilder classpath = new StringBuilder();
    for (String entry : file.trim().split(":")) {
      classpath.append(classpath.length() == 0 ? "" : ":").append(file(entry));
    }
    return classpath.toString();
  }

  /**
   * The image's entrypoint ({@code java OPTIONS -cp @/app/jib-classpath-file MAIN}) as a command
   * for where the image lies unpacked: its java and classpath there, each of its options through
   * {@code option} (which may rewrite it, e.g. an AOT cache's path), and {@code extra} after them.
   */
  public java.util.List<String> unpackedCommand(
      java.util.function.UnaryOperator<String> option, java.util.List<String> extra)
      throws IOException {
    java.util.List<String> entrypoint = new java.util.ArrayList<>();
    config.at("/config/Entrypoint").forEach(word -> entrypoint.add(word.asText()));
    int cp = entrypoint.indexOf("-cp");
    java.util.List<String> command = new java.util.ArrayList<>();
    command.add(file(entrypoint.get(0)).toString());
    entrypoint.subList(1, cp).forEach(o -> command.add(option.apply(o)));
    command.addAll(extra);
    command.add("-cp");
    command.add(unpackedClasspath());
    command.add(entrypoint.get(cp + 2));
    return command;
  }

  /**
   * The image's environment for where it lies unpacked: its variables, with {@code JAVA_HOME} and
   * {@code PATH} naming its runtime there (and the host's /usr/bin and /bin after it).
   */
  public Map<String, String> unpackedEnvironment() {
    Map<String, String> variables = new HashMap<>();
    config
        .at("/config/Env")
        .forEach(
            variable -> {
              String text = variable.asText();
              int equals = text.indexOf('=');
              variables.put(text.substring(0, equals), text.substring(equals + 1));
            });
    variables.put("JAVA_HOME", file("/opt/java").toString());
    variables.put("PATH", file("/opt/java/bin") + ":/usr/bin:/bin");
    return variables;
  }

  /** A path of the image ({@code /app/...}) where it lies unpacked. */
  public Path file(String absolutePath) {
    return root.resolve(absolutePath.substring(1));
  }

  /** A tar stream, entry by entry: regular files, directories and symbolic links. */
  private static final class TarReader {
    private final InputStream in;

    TarReader(InputStream in) {
      this.in = in;
    }

    void extractTo(Path dir) throws IOException {
      Map<String, String> pax = new HashMap<>();
      byte[] header = new byte[512];
      while (readFully(header)) {
        if (isZero(header)) {
          return;
        }
        String name = string(header, 0, 100);
        String prefix = isUstar(header) ? string(header, 345, 155) : "";
        if (!prefix.isEmpty()) {
          name = prefix + "/" + name;
        }
        int mode = (int) octal(header, 100, 8);
        long size = octal(header, 124, 12);
        char type = (char) header[156];
        String link = string(header, 157, 100);
        if (type == 'x' || type == 'g') {
          Map<String, String> records = paxRecords(readBytes(size));
          if (type == 'x') {
            pax = records;
          }
          skipPadding(size);
          continue;
        }
        name = pax.getOrDefault("path", name);
        link = pax.getOrDefault("linkpath", link);
        pax = new HashMap<>();
        Path target = dir.resolve(name).normalize();
        if (!target.startsWith(dir)) {
          throw new IOException("tar entry outside the target directory: " + name);
        }
        switch (type) {
          case '5' -> Files.createDirectories(target);
          case '2' -> {
            Files.createDirectories(target.getParent());
            Files.deleteIfExists(target);
            Files.createSymbolicLink(target, Path.of(link));
          }
          case '0', '\0' -> {
            Files.createDirectories(target.getParent());
            Files.copy(new Bounded(in, size), target, StandardCopyOption.REPLACE_EXISTING);
            skipPadding(size);
          }
          default -> throw new IOException("tar entry of type " + type + " not expected: " + name);
        }
        if (type != '2') {
          Files.setPosixFilePermissions(target, permissions(mode));
        }
      }
    }

    private boolean readFully(byte[] block) throws IOException {
      int n = in.readNBytes(block, 0, block.length);
      if (n == 0) {
        return false;
      }
      if (n < block.length) {
        throw new EOFException("truncated tar header");
      }
      return true;
    }

    private byte[] readBytes(long size) throws IOException {
      byte[] bytes = in.readNBytes((int) size);
      if (bytes.length != size) {
        throw new EOFException("truncated tar entry");
      }
      return bytes;
    }

    private void skipPadding(long size) throws IOException {
      long padding = (512 - size % 512) % 512;
      in.skipNBytes(padding);
    }

    private static Map<String, String> paxRecords(byte[] bytes) {
      Map<String, String> records = new HashMap<>();
      String text = new String(bytes, StandardCharsets.UTF_8);
      for (String line : text.split("\n")) {
        int space = line.indexOf(' ');
        int equals = line.indexOf('=');
        if (space > 0 && equals > space) {
          records.put(line.substring(space + 1, equals), line.substring(equals + 1));
        }
      }
      return records;
    }

    private static boolean isZero(byte[] block) {
      for (byte b : block) {
        if (b != 0) {
          return false;
        }
      }
      return true;
    }

    private static boolean isUstar(byte[] header) {
      return string(header, 257, 5).equals("ustar");
    }

    private static String string(byte[] header, int offset, int length) {
      int end = offset;
      while (end < offset + length && header[end] != 0) {
        end++;
      }
      return new String(header, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] header, int offset, int length) {
      String digits = string(header, offset, length).trim();
      return digits.isEmpty() ? 0 : Long.parseLong(digits, 8);
    }

    private static Set<PosixFilePermission> permissions(int mode) {
      Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
      PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ ... OTHERS_EXECUTE
      for (int i = 0; i < bits.length; i++) {
        if ((mode & (0400 >> i)) != 0) {
          permissions.add(bits[i]);
        }
      }
      return permissions;
    }
  }

  /** The next {@code size} bytes of a stream, without closing it. */
  private static final class Bounded extends InputStream {
    private final InputStream in;
    private long left;

    Bounded(InputStream in, long size) {
      this.in = in;
      this.left = size;
    }

    @Override
    public int read() throws IOException {
      if (left == 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        left--;
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      if (left == 0) {
        return -1;
      }
      int n = in.read(buffer, offset, (int) Math.min(length, left));
      if (n > 0) {
        left -= n;
      } else if (n < 0) {
        throw new EOFException("truncated tar entry");
      }
      return n;
    }

    @Override
    public void close() {}
  }
}
