package io.kipam.api.labels;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Kubernetes' syntax of label keys and values (apimachinery {@code content.IsLabelKey} and {@code
 * IsLabelValue}). A selector whose key or value breaks it is refused, as the API server refuses it
 * in a built-in object: such a requirement could never be met by a real label, so accepting it
 * would make {@code In} silently never and {@code NotIn} silently always match.
 */
final class LabelSyntax {

  static final int MAX_NAME_LENGTH = 63;
  static final int MAX_PREFIX_LENGTH = 253;
  static final int MAX_VALUE_LENGTH = 63;

  private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  private static final Pattern DNS_1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final String NAME_RULE =
      "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric";

  private LabelSyntax() {}

  /** What is wrong with a label key, or empty if it is a valid one. */
  static Optional<String> keyProblem(String key) {
    if (key == null) {
      return Optional.of("key is required");
    }
    String name = key;
    int slash = key.indexOf('/');
    if (slash >= 0) {
      if (key.indexOf('/', slash + 1) >= 0) {
        return problem(key, "has more than one '/' (write prefix/name, e.g. example.com/tier)");
      }
      String prefix = key.substring(0, slash);
      if (prefix.isEmpty()) {
        return problem(key, "has an empty prefix before '/'");
      }
      if (prefix.length() > MAX_PREFIX_LENGTH || !DNS_1123_SUBDOMAIN.matcher(prefix).matches()) {
        return problem(
            key,
            "has a prefix that is not a DNS subdomain (lowercase alphanumerics, '-' and '.', at"
                + " most 253 characters)");
      }
      name = key.substring(slash + 1);
    }
    if (name.isEmpty()) {
      return problem(key, "has an empty name");
    }
    if (name.length() > MAX_NAME_LENGTH) {
      return problem(key, "has a name longer than 63 characters");
    }
    if (!NAME.matcher(name).matches()) {
      return problem(key, "has a name that is not " + NAME_RULE);
    }
    return Optional.empty();
  }

  /** What is wrong with a label value, or empty if it is a valid one (the empty string is). */
  static Optional<String> valueProblem(String value) {
    if (value == null) {
      return Optional.of("value is null");
    }
    if (value.length() > MAX_VALUE_LENGTH) {
      return Optional.of("value " + quote(value) + " is longer than 63 characters");
    }
    if (!value.isEmpty() && !NAME.matcher(value).matches()) {
      return Optional.of("value " + quote(value) + " is not empty and not " + NAME_RULE);
    }
    return Optional.empty();
  }

  static String quote(String text) {
    return "\"" + text + "\"";
  }

  private static Optional<String> problem(String key, String what) {
    return Optional.of("key " + quote(key) + " " + what);
  }
}
