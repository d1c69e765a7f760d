package io.kipam.api.net;

import java.util.function.Function;

/**
 * How this package words a rejected input: the input quoted exactly as the user wrote it, then what
 * is wrong with it, then the fix where there is one. Users read these messages in {@code kubectl}
 * output and CNI errors, so they must say enough to fix the input without reading code.
 */
final class Messages {

  private Messages() {}

  static String quote(Object value) {
    return "'" + value + "'";
  }

  static IllegalArgumentException invalid(String input, String problem) {
    return new IllegalArgumentException(quote(input) + " " + problem);
  }

  /**
   * Rejects null and surrounding whitespace before any parsing, so that the parsers proper only
   * ever see the characters that matter. Where the stripped text parses, the message offers its
   * canonical form.
   */
  static void requirePlainText(String input, String what, Function<String, ?> canonical) {
    if (input == null) {
      throw new IllegalArgumentException(what + " is required but was null");
    }
    String stripped = input.strip();
    if (stripped.equals(input)) {
      return;
    }
    String problem = "has leading or trailing whitespace";
    try {
      problem += "; write " + quote(canonical.apply(stripped));
    } catch (IllegalArgumentException stillInvalid) {
      // Nothing to suggest: the text is wrong in more ways than its whitespace.
    }
    throw invalid(input, problem);
  }

  /** True if every character is an ASCII digit; {@link Character#isDigit} would admit others. */
  static boolean isDecimal(String text) {
    if (text.isEmpty()) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }
}
