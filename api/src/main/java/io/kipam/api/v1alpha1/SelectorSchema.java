package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import java.util.Map;

/**
 * The schema of IPPool's {@code nodeSelector} and {@code namespaceSelector} (through {@code
 * SchemaFrom}; their Java type stays fabric8's {@code LabelSelector}): Kubernetes' LabelSelector,
 * with what the API server checks on built-in objects' selectors added, so that a pool whose
 * selector every allocation would refuse is refused at admission instead. Lists and strings are
 * bounded so that the CEL rules have a cost the API server can bound.
 */
final class SelectorSchema {

  @JsonProperty
  @Size(max = 32)
  @ValidationRule(
      value = SelectorRules.LABELS_SYNTAX,
      messageExpression = SelectorRules.LABELS_SYNTAX_MESSAGE)
  @JsonPropertyDescription(
      "Labels that must be present with exactly these values; each entry is one requirement.")
  private Map<String, @Size(max = 63) String> matchLabels;

  @JsonProperty
  @Size(max = 32)
  @JsonPropertyDescription("Requirements on labels; all of them (and matchLabels) must hold.")
  private List<Requirement> matchExpressions;

  /** One {@code matchExpressions} entry. */
  @ValidationRule(
      value = SelectorRules.VALUES_FIT_OPERATOR,
      messageExpression = SelectorRules.VALUES_FIT_OPERATOR_MESSAGE,
      fieldPath = ".values")
  static final class Requirement {

    @JsonProperty
    @Required
    @Size(max = 317)
    @ValidationRule(value = SelectorRules.KEY_SYNTAX, message = SelectorRules.KEY_SYNTAX_MESSAGE)
    @JsonPropertyDescription("The label key the requirement is about, e.g. kubernetes.io/os.")
    private String key;

    @JsonProperty
    @Required
    @JsonPropertyDescription(
        "In and NotIn: the label's value is (not) one of values; NotIn also holds when the label"
            + " is absent. Exists and DoesNotExist: the label is present or absent.")
    private Operator operator;

    @JsonProperty
    @Size(max = 256)
    @ValidationRule(
        value = SelectorRules.VALUES_SYNTAX,
        messageExpression = SelectorRules.VALUES_SYNTAX_MESSAGE)
    @JsonPropertyDescription(
        "At least one value for In and NotIn; none for Exists and DoesNotExist.")
    private List<@Size(max = 63) String> values;
  }

  /** The operators of a requirement, spelled as in the API. */
  enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist
  }
}
