package io.kipam.api.labels;

import java.util.Optional;

/**
 * How a {@link Requirement} relates a label's value to its values. {@link #EQUALS} is what a {@code
 * matchLabels} entry means; the others are the operators of {@code matchExpressions}, spelled in
 * the API exactly (and case-sensitively) as {@link #apiName()} says.
 */
public enum Operator {
  EQUALS(null, "="),
  IN("In", " in "),
  NOT_IN("NotIn", " notin "),
  EXISTS("Exists", ""),
  DOES_NOT_EXIST("DoesNotExist", "");

  /** The operators a {@code matchExpressions} entry may name, in the order the API lists them. */
  static final String EXPRESSION_OPERATORS = "In, NotIn, Exists, DoesNotExist";

  private final String apiName;
  private final String infix;

  Operator(String apiName, String infix) {
    this.apiName = apiName;
    this.infix = infix;
  }

  /** The operator's name in {@code matchExpressions}; {@code null} for {@link #EQUALS}. */
  public String apiName() {
    return apiName;
  }

  /** What kubectl writes between the key and the values ({@code " in "}, {@code "="}). */
  String infix() {
    return infix;
  }

  /** True for the operators that compare values, false for those that only test the key. */
  public boolean takesValues() {
    return this == EQUALS || this == IN || this == NOT_IN;
  }

  /** The {@code matchExpressions} operator with this exact name, if there is one. */
  public static Optional<Operator> fromApiName(String name) {
    for (Operator operator : values()) {
      if (operator.apiName != null && operator.apiName.equals(name)) {
        return Optional.of(operator);
      }
    }
    return Optional.empty();
  }
}
