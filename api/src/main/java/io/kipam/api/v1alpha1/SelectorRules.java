package io.kipam.api.v1alpha1;

/**
 * The CEL rules that make the API server refuse an IPPool label selector that {@code
 * io.kipam.api.labels.Selectors} would refuse (and so would every allocation from the pool): the
 * checks Kubernetes applies to the selectors of built-in objects. Key and value syntax is written
 * as CEL rather than {@code pattern} so the message says what a label key is instead of quoting a
 * regular expression.
 */
final class SelectorRules {

  /** A label name: at most 63 alphanumerics, '-', '_', '.', starting and ending alphanumeric. */
  private static final String NAME = "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?";

  private static final String DNS_SUBDOMAIN =
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

  /** A label key: an optional DNS subdomain prefix and '/', then a name. */
  private static final String KEY_REGEX = "'^(" + DNS_SUBDOMAIN + "/)?" + NAME + "$'";

  /** A label value: empty, or a name. */
  private static final String VALUE_REGEX = "'^(" + NAME + ")?$'";

  // The prefix is at most 253 characters: the '/' that ends it is at most at index 253.
  static final String KEY_SYNTAX = "self.matches(" + KEY_REGEX + ") && self.indexOf('/') <= 253";
  static final String KEY_SYNTAX_MESSAGE =
      "must be a label key: an optional DNS subdomain prefix (at most 253 characters) and '/', then"
          + " a name of at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an"
          + " alphanumeric, e.g. example.com/tier";

  private static final String VALUE_VALID = "v.matches(" + VALUE_REGEX + ")";
  static final String VALUES_SYNTAX = "self.all(v, " + VALUE_VALID + ")";
  static final String VALUES_SYNTAX_MESSAGE =
      "'value \"' + self.filter(v, !"
          + VALUE_VALID
          + ")[0] + '\" is not a label value: empty, or at most 63 alphanumerics, \\'-\\',"
          + " \\'_\\' or \\'.\\' that start and end with an alphanumeric'";

  private static final String ENTRY_VALID =
      "(k.matches("
          + KEY_REGEX
          + ") && k.indexOf('/') <= 253 && self[k].matches("
          + VALUE_REGEX
          + "))";
  static final String LABELS_SYNTAX = "self.all(k, " + ENTRY_VALID + ")";
  static final String LABELS_SYNTAX_MESSAGE =
      "'entry \"' + self.filter(k, !"
          + ENTRY_VALID
          + ")[0] + '\" is not a label key with a label value: the same rules as"
          + " matchExpressions[].key and values'";

  static final String VALUES_FIT_OPERATOR =
      "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0"
          + " : !has(self.values) || size(self.values) == 0";
  static final String VALUES_FIT_OPERATOR_MESSAGE =
      "'the requirement on key \"' + self.key + '\": ' + self.operator"
          + " + (self.operator in ['In', 'NotIn'] ? ' needs at least one value in values'"
          + " : ' takes no values')";

  private SelectorRules() {}
}
