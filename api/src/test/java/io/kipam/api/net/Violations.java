package io.kipam.api.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Collects broken expectations in hot loops of property tests, where a full AssertJ assertion per
 * address would cost more than the code under test, and reports the first few at the end.
 */
final class Violations {

  private static final int REPORTED = 10;

  private final List<String> found = new ArrayList<>();
  private int count;

  /** Records a violation unless {@code ok}; the message is formatted only on failure. */
  void expect(boolean ok, String format, Object... args) {
    if (!ok) {
      count++;
      if (found.size() < REPORTED) {
        found.add(String.format(format, args));
      }
    }
  }

  void expectEqual(Object actual, Object expected, String format, Object... args) {
    if (!Objects.equals(actual, expected)) {
      expect(false, "%s: expected %s but was %s", String.format(format, args), expected, actual);
    }
  }

  /** Records a violation unless {@code call} throws IllegalArgumentException. */
  void expectRejected(Runnable call, String format, Object... args) {
    try {
      call.run();
      expect(false, "%s: expected IllegalArgumentException", String.format(format, args));
    } catch (IllegalArgumentException expected) {
      // As specified.
    }
  }

  void assertNone() {
    assertThat(found).as("%d violations, first ones listed", count).isEmpty();
  }
}
