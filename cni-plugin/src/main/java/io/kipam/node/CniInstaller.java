package io.kipam.node;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * Installs the native kipam executable into the host's CNI bin directory: kipam-node's init
 * container runs it ({@code java -cp @/app/jib-classpath-file io.kipam.node.CniInstaller}) from the
 * kipam-node image. It does what {@code install-kipam.sh} does for the native binary: {@code
 * kipam.conf} first, then the executable by rename, so a container runtime never runs a half-copied
 * file, and the Java version's leftovers ({@code kipam.jar}, {@code kipam.jsa}) go.
 *
 * <ul>
 *   <li>{@code KIPAM_CNI_BIN_DIR} (required): the host's CNI bin directory as mounted, e.g. {@code
 *       /host/opt/cni/bin}; created if missing.
 *   <li>{@code KIPAM_SOCKET}: the daemon's socket, written to {@code kipam.conf} as {@code
 *       socket=PATH} for configurations that name none; without it, {@code kipam.conf} is removed
 *       and kipam uses its default.
 *   <li>{@code KIPAM_CNI_SOURCE}: the executable to install; default {@code /opt/kipam/kipam}.
 * </ul>
 *
 * Any problem is one line on stderr naming it, and a non-zero exit.
 */
public final class CniInstaller {

  static final String DEFAULT_SOURCE = "/opt/kipam/kipam";

  private CniInstaller() {}

  public static void main(String[] args) {
    System.exit(run(System.getenv(), System.out, System.err));
  }

  /** Installs kipam as {@code env} says; returns the exit code. */
  static int run(Map<String, String> env, PrintStream out, PrintStream err) {
    String binDir = env.get("KIPAM_CNI_BIN_DIR");
    if (binDir == null || binDir.isBlank()) {
      err.println(
          "kipam-cni-installer: KIPAM_CNI_BIN_DIR is not set: set it to the host's CNI bin"
              + " directory as mounted in this container, e.g. /host/opt/cni/bin");
      return 2;
    }
    Path source = Path.of(env.getOrDefault("KIPAM_CNI_SOURCE", DEFAULT_SOURCE));
    if (!Files.isRegularFile(source)) {
      err.println(
          "kipam-cni-installer: no kipam executable at "
              + source
              + " (KIPAM_CNI_SOURCE): nothing to install");
      return 2;
    }
    String socket = env.get("KIPAM_SOCKET");
    Path target = Path.of(binDir);
    try {
      Files.createDirectories(target);
      Path conf = target.resolve("kipam.conf");
      if (socket != null && !socket.isBlank()) {
        Path confTmp = target.resolve("kipam.conf.tmp");
        Files.writeString(confTmp, "socket=" + socket + "\n", StandardCharsets.UTF_8);
        Files.move(confTmp, conf, StandardCopyOption.ATOMIC_MOVE);
      } else {
        Files.deleteIfExists(conf);
      }
      Path tmp = target.resolve("kipam.tmp");
      Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.move(tmp, target.resolve("kipam"), StandardCopyOption.ATOMIC_MOVE);
      Files.deleteIfExists(target.resolve("kipam.jar"));
      Files.deleteIfExists(target.resolve("kipam.jsa"));
    } catch (IOException | UnsupportedOperationException e) {
      err.println(
          "kipam-cni-installer: cannot install kipam into "
              + target
              + " (KIPAM_CNI_BIN_DIR): "
              + describe(e));
      return 1;
    }
    out.println("installed kipam into " + target);
    return 0;
  }

  private static String describe(Exception e) {
    String what = e.getClass().getSimpleName();
    return e.getMessage() == null ? what : what + " " + e.getMessage();
  }
}
