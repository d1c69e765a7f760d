package io.kipam.api.net;

import static io.kipam.api.net.Messages.invalid;
import static io.kipam.api.net.Messages.isDecimal;
import static io.kipam.api.net.Messages.quote;

import java.math.BigInteger;

/**
 * Reads every textual form of an address that RFC 4291 section 2.2 allows (any case, leading zeros
 * in IPv6 groups, "::" anywhere it stands for at least one group, a dotted IPv4 tail), except zone
 * IDs. IPv4 octets with leading zeros are refused in every mode: {@code inet_aton} reads "010" as
 * octal 8 while others read decimal 10, so no interpretation is safe.
 *
 * <p>Canonical form is not checked here. Canonical text is unique, so callers check it by comparing
 * the input with the parsed value's {@code toString()}. Errors quote {@code input}, which may be a
 * whole CIDR of which {@code text} is the address part.
 */
final class AddressParser {

  private static final int V6_GROUPS = 8;

  private AddressParser() {}

  static IpAddress parse(String input, String text) {
    if (text.isEmpty()) {
      throw invalid(input, "has no address");
    }
    int zone = text.indexOf('%');
    if (zone >= 0) {
      throw invalid(
          input, "has a zone ID " + quote(text.substring(zone)) + "; zone IDs are not allowed");
    }
    if (text.indexOf(':') >= 0) {
      return IpAddress.of(IpFamily.V6, parseV6(input, text));
    }
    if (text.indexOf('.') >= 0) {
      return IpAddress.of(IpFamily.V4, BigInteger.valueOf(parseV4(input, text)));
    }
    throw invalid(input, "is not an IP address (no '.' or ':')");
  }

  private static long parseV4(String input, String text) {
    String[] octets = text.split("\\.", -1);
    if (octets.length != 4) {
      throw invalid(
          input, "has " + octets.length + " dot-separated parts; an IPv4 address has 4 octets");
    }
    long value = 0;
    for (String octet : octets) {
      value = value << 8 | parseOctet(input, octet);
    }
    return value;
  }

  private static int parseOctet(String input, String octet) {
    if (octet.isEmpty()) {
      throw invalid(input, "has an empty octet");
    }
    if (!isDecimal(octet)) {
      throw invalid(input, "has octet " + quote(octet) + " that is not a decimal number");
    }
    if (octet.length() > 1 && octet.charAt(0) == '0') {
      throw invalid(
          input,
          "has octet " + quote(octet) + " with a leading zero, which some tools read as octal");
    }
    if (octet.length() > 3 || Integer.parseInt(octet) > 255) {
      throw invalid(input, "has octet " + quote(octet) + " out of range 0-255");
    }
    return Integer.parseInt(octet);
  }

  private static BigInteger parseV6(String input, String text) {
    if (text.contains(":::")) {
      throw invalid(input, "has ':::'");
    }
    int gap = text.indexOf("::");
    if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
      throw invalid(input, "has more than one '::'");
    }
    int[] groups = new int[V6_GROUPS];
    if (gap < 0) {
      int[] all = readGroups(input, text, true);
      if (all.length != V6_GROUPS) {
        throw invalid(
            input,
            "has "
                + all.length
                + " groups; an IPv6 address has 8 unless '::' stands for a run of zero groups");
      }
      System.arraycopy(all, 0, groups, 0, V6_GROUPS);
    } else {
      int[] head = readGroups(input, text.substring(0, gap), false);
      int[] tail = readGroups(input, text.substring(gap + 2), true);
      if (head.length + tail.length >= V6_GROUPS) {
        throw invalid(
            input,
            "has "
                + (head.length + tail.length)
                + " groups besides '::', so '::' would stand for no group at all");
      }
      System.arraycopy(head, 0, groups, 0, head.length);
      System.arraycopy(tail, 0, groups, V6_GROUPS - tail.length, tail.length);
    }
    byte[] bytes = new byte[2 * V6_GROUPS];
    for (int i = 0; i < V6_GROUPS; i++) {
      bytes[2 * i] = (byte) (groups[i] >>> 8);
      bytes[2 * i + 1] = (byte) groups[i];
    }
    return new BigInteger(1, bytes);
  }

  /**
   * Reads the colon-separated groups of one side of "::" (or of the whole text). A dotted IPv4 tail
   * counts as two groups and is allowed only at the very end of the address.
   */
  private static int[] readGroups(String input, String part, boolean mayEndInIpv4) {
    if (part.isEmpty()) {
      return new int[0];
    }
    String[] pieces = part.split(":", -1);
    if (pieces.length > V6_GROUPS) {
      throw invalid(input, "has more than 8 groups");
    }
    int[] groups = new int[V6_GROUPS];
    int count = 0;
    for (int i = 0; i < pieces.length; i++) {
      String piece = pieces[i];
      boolean last = i == pieces.length - 1;
      if (piece.isEmpty()) {
        throw invalid(input, i == 0 ? "starts with a single ':'" : "ends with a single ':'");
      }
      if (piece.indexOf('.') >= 0) {
        if (!last || !mayEndInIpv4) {
          throw invalid(input, "has an IPv4 part " + quote(piece) + " that is not at the end");
        }
        if (count + 2 > V6_GROUPS) {
          throw invalid(input, "has more than 8 groups");
        }
        long v4 = parseV4(input, piece);
        groups[count++] = (int) (v4 >>> 16);
        groups[count++] = (int) (v4 & 0xffff);
      } else {
        groups[count++] = parseGroup(input, piece);
      }
    }
    int[] result = new int[count];
    System.arraycopy(groups, 0, result, 0, count);
    return result;
  }

  private static int parseGroup(String input, String group) {
    for (int i = 0; i < group.length(); i++) {
      if (!isAsciiHex(group.charAt(i))) {
        throw invalid(input, "has group " + quote(group) + " that is not hexadecimal");
      }
    }
    if (group.length() > 4) {
      throw invalid(input, "has group " + quote(group) + " with more than 4 hex digits");
    }
    return Integer.parseInt(group, 16);
  }

  // Character.digit would also accept full-width and other non-ASCII digits.
  private static boolean isAsciiHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
}
