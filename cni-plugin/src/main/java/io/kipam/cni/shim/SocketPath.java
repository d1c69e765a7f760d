package io.kipam.cni.shim;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Where the executable reaches {@code kipam-node}: the configuration's {@code ipam.socket}, checked
 * before anything connects, or the default socket when none is named. A path that can never be a
 * socket is a configuration error, not a reason to try again later, so it is reported as such, in
 * the words the daemon uses for the same rules ({@code io.kipam.cni.spec.IpamConfig}).
 */
final class SocketPath {

  /** sun_path holds 108 bytes on Linux, the terminating NUL included. */
  static final int MAX_BYTES = 107;

  /** What a valid {@code ipam.socket} looks like, for the details of an error. */
  static final String RULE =
      "kipam connects to kipam-node through ipam.socket; name it by an absolute path of at most "
          + MAX_BYTES
          + " bytes, or leave it out for the default socket";

  /** Values quoted in messages are cut after this many characters, as the daemon cuts them. */
  private static final int MAX_QUOTED = 80;

  private SocketPath() {}

  /**
   * The socket named by {@code ipam.socket} in {@code config}, or {@code defaultSocket} if none is
   * named (or the configuration could not be read). A named socket must lie in the directory of
   * {@code defaultSocket}, the installer's ({@link SocketDirectory}).
   *
   * @throws SocketDirectory.Outside if the named socket is not in that directory
   * @throws IllegalArgumentException naming {@code ipam.socket} and what else is wrong with it
   */
  static Path resolve(Map<String, Object> config, Path defaultSocket) {
    if (!(config.get("ipam") instanceof Map<?, ?> ipam) || ipam.get("socket") == null) {
      return defaultSocket;
    }
    Object named = ipam.get("socket");
    if (!(named instanceof String socket)) {
      throw new IllegalArgumentException("ipam.socket must be a string, not " + typeOf(named));
    }
    if (!socket.startsWith("/")) {
      throw new IllegalArgumentException(
          "ipam.socket " + quote(socket) + " must be an absolute path");
    }
    if (socket.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("ipam.socket must not contain a NUL character");
    }
    if (socket.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
      throw new IllegalArgumentException(
          "ipam.socket "
              + quote(socket)
              + " is longer than the "
              + MAX_BYTES
              + " bytes a unix socket path may have");
    }
    if (socket.equals(defaultSocket.toString())) {
      return defaultSocket; // the installer's own socket needs no checking
    }
    return SocketDirectory.of(defaultSocket).confine(socket);
  }

  private static String typeOf(Object value) {
    if (value instanceof Map<?, ?>) {
      return "an object";
    } else if (value instanceof List<?>) {
      return "a list";
    } else if (value instanceof Boolean) {
      return "a boolean";
    }
    return "a number";
  }

  static String quote(String value) {
    StringBuilder quoted = new StringBuilder("'");
    int end = Math.min(value.length(), MAX_QUOTED);
    for (int i = 0; i < end; i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        quoted.append(String.format("\\u%04x", (int) c));
      } else {
        quoted.append(c);
      }
    }
    if (value.length() > MAX_QUOTED) {
      quoted.append("...(").append(value.length()).append(" characters)");
    }
    return quoted.append('\'').toString();
  }
}
