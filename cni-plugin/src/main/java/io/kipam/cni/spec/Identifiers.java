package io.kipam.cni.spec;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The specification's rules for the identifiers of an attachment, shared by the environment
 * (CNI_CONTAINERID, CNI_IFNAME), the network name and GC's valid-attachments list, so that a value
 * accepted in one place is accepted in all of them. Each check answers the problem in words, or
 * empty when the value is fine.
 */
final class Identifiers {

  /** Container IDs and network names: an alphanumeric, then alphanumerics, '_', '.' or '-'. */
  private static final Pattern ID = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.\\-]*");

  /** Linux's IFNAMSIZ is 16 bytes including the terminating NUL. */
  static final int MAX_IFNAME_BYTES = 15;

  private Identifiers() {}

  static Optional<String> containerIdProblem(String id) {
    if (id.isEmpty()) {
      return Optional.of("is empty");
    }
    if (!ID.matcher(id).matches()) {
      return Optional.of(
          Json.quote(id)
              + " must start with a letter or digit, followed by letters, digits, '_', '.' or '-'");
    }
    return Optional.empty();
  }

  static Optional<String> networkNameProblem(String name) {
    return containerIdProblem(name);
  }

  static Optional<String> ifNameProblem(String name) {
    if (name.isEmpty()) {
      return Optional.of("is empty");
    }
    if (name.equals(".") || name.equals("..")) {
      return Optional.of(Json.quote(name) + " is not a valid interface name");
    }
    int bytes = name.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_IFNAME_BYTES) {
      return Optional.of(
          Json.quote(name)
              + " is "
              + bytes
              + " bytes long; a Linux interface name has at most "
              + MAX_IFNAME_BYTES);
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '/' || c == ':' || isSpace(c)) {
        return Optional.of(
            Json.quote(name) + " contains '/', ':' or whitespace, which an interface name may not");
      }
    }
    return Optional.empty();
  }

  /** Whitespace as Go's unicode.IsSpace sees it, which the reference implementation uses. */
  private static boolean isSpace(char c) {
    return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == 0x85;
  }
}
