package io.kipam.cni.shim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * The directory the executable may connect in: the one holding the installer's socket, which only
 * root can write to. The executable runs as root, so a socket named by a tenant's network
 * configuration must not take it to a socket of someone else's choosing (one a pod made could
 * answer with any address); {@link #confine} refuses every path that does not stay in here.
 */
record SocketDirectory(Path dir) {

  /** The directory of {@code installedSocket}. */
  static SocketDirectory of(Path installedSocket) {
    Path socket = installedSocket.toAbsolutePath().normalize();
    return new SocketDirectory(socket.getParent() == null ? socket : socket.getParent());
  }

  /** What a named socket must be, for the details of an error. */
  String rule() {
    return "kipam connects only to a socket in "
        + dir
        + ", the directory its installer configured; leave ipam.socket out for the default socket";
  }

  /**
   * {@code socket}, lexically cleaned, if it lies inside the directory. The cleaned path is what
   * the executable connects to, so "..", "." and double slashes mean the same to the check and to
   * the kernel. Symbolic links among the parts that exist are followed, and the path must still end
   * inside; a link that cannot be followed counts as leaving. Where the parent directory does not
   * exist, the connect fails anyway.
   *
   * @param socket an absolute path, as the configuration wrote it (and a message quotes it)
   * @throws Outside naming {@code ipam.socket} and the directory
   */
  Path confine(String socket) {
    Path clean = Path.of(socket).normalize();
    if (!inside(clean, dir)) {
      throw new Outside(
          "ipam.socket " + SocketPath.quote(socket) + " is not a path inside " + dir, rule());
    }
    if (leaves(clean)) {
      throw new Outside(
          "ipam.socket "
              + SocketPath.quote(socket)
              + " leads outside "
              + dir
              + " through a symbolic link",
          rule());
    }
    return clean;
  }

  /** A named socket outside the directory, with the rule it breaks for the details of an error. */
  static final class Outside extends IllegalArgumentException {

    private final String details;

    Outside(String message, String details) {
      super(message);
      this.details = details;
    }

    String details() {
      return details;
    }
  }

  private static boolean inside(Path path, Path dir) {
    return path.startsWith(dir) && !path.equals(dir);
  }

  private boolean leaves(Path path) {
    Path realDir;
    try {
      realDir = dir.toRealPath();
    } catch (IOException e) {
      return false; // no directory: nothing in it to connect to
    }
    Path real;
    try {
      real = path.toRealPath();
    } catch (IOException e) {
      if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
        return true; // there, but not to be followed: a dangling link
      }
      try {
        real = path.getParent().toRealPath().resolve(path.getFileName());
      } catch (IOException noParent) {
        return false;
      }
    }
    return !inside(real, realDir);
  }
}
