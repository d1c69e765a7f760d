package io.kipam.api.labels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Selectors as Kubernetes evaluates them. Every row of the three tables was checked against
 * apimachinery v0.36.3 ({@code metav1.LabelSelectorAsSelector}, {@code Selector.Matches}, {@code
 * metav1.FormatLabelSelector}). kipam differs on purpose in three places: an absent selector
 * matches everything (the pool fields say so), and a {@code null} matchLabels value and an unknown
 * field are errors where Go's decoder would read "" and drop the field (the API server prunes both
 * before kipam sees a pool, so only hand-built selectors meet this).
 */
class SelectorsTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @ParameterizedTest(name = "{0} on [{1}] -> {2}")
  @MethodSource("matchTable")
  void matchesAsKubernetesDoes(String selector, String labels, boolean expected) {
    assertThat(Selectors.matches(selector(selector), labels(labels))).isEqualTo(expected);
    assertThat(Selectors.parse(selector(selector)).matches(labels(labels))).isEqualTo(expected);
  }

  static Stream<Arguments> matchTable() {
    return Stream.of(
        // absent and empty selectors match everything
        row(null, "", true),
        row(null, "app=web", true),
        row("{}", "", true),
        row("{}", "app=web", true),
        row("{matchLabels: {}, matchExpressions: []}", "app=web", true),
        // matchLabels: key present with exactly that value
        row("{matchLabels: {app: web}}", "app=web", true),
        row("{matchLabels: {app: web}}", "app=web,tier=a", true),
        row("{matchLabels: {app: web}}", "app=db", false),
        row("{matchLabels: {app: web}}", "", false),
        row("{matchLabels: {app: web}}", "App=web", false),
        row("{matchLabels: {app: web}}", "app=Web", false),
        row("{matchLabels: {app: \"\"}}", "app=", true),
        row("{matchLabels: {app: \"\"}}", "", false),
        row("{matchLabels: {app: \"\"}}", "app=web", false),
        row("{matchLabels: {app: web, tier: a}}", "app=web", false),
        row("{matchLabels: {app: web, tier: a}}", "app=web,tier=a", true),
        row("{matchLabels: {kubernetes.io/os: linux}}", "kubernetes.io/os=linux", true),
        row("{matchLabels: {kubernetes.io/os: linux}}", "os=linux", false),
        // In: key present with one of the values
        row(only(in("tier", "a", "b")), "tier=a", true),
        row(only(in("tier", "a", "b")), "tier=b", true),
        row(only(in("tier", "a", "b")), "tier=c", false),
        row(only(in("tier", "a", "b")), "", false),
        row(only(in("tier", "a", "b")), "tier=", false),
        row(only(in("tier", "a", "a")), "tier=a", true),
        row("{matchExpressions: [{key: tier, operator: In, values: [\"\"]}]}", "tier=", true),
        row("{matchExpressions: [{key: tier, operator: In, values: [\"\"]}]}", "", false),
        // NotIn: key absent, or present with none of the values
        row(only(notIn("tier", "a", "b")), "tier=c", true),
        row(only(notIn("tier", "a", "b")), "tier=a", false),
        row(only(notIn("tier", "a", "b")), "", true),
        row(only(notIn("tier", "a", "b")), "app=web", true),
        row(only(notIn("tier", "a", "b")), "tier=", true),
        // Exists and DoesNotExist look at the key only, and an empty value is a value
        row(only(exists("legacy")), "legacy=yes", true),
        row(only(exists("legacy")), "legacy=", true),
        row(only(exists("legacy")), "", false),
        row(only(exists("legacy")), "legacy-x=1", false),
        row(only(doesNotExist("legacy")), "", true),
        row(only(doesNotExist("legacy")), "app=web", true),
        row(only(doesNotExist("legacy")), "legacy=", false),
        row(only(doesNotExist("legacy")), "legacy=yes", false),
        // every requirement must hold
        row(labelsAnd("app: web", in("tier", "a")), "app=web,tier=a", true),
        row(labelsAnd("app: web", in("tier", "a")), "app=web,tier=b", false),
        row(labelsAnd("app: web", in("tier", "a")), "tier=a", false),
        row(
            "{matchExpressions: [{key: tier, operator: In, values: [a, b]},"
                + " {key: legacy, operator: DoesNotExist}, {key: zone, operator: Exists}]}",
            "tier=b,zone=z1",
            true),
        row(
            "{matchExpressions: [{key: tier, operator: In, values: [a, b]},"
                + " {key: legacy, operator: DoesNotExist}, {key: zone, operator: Exists}]}",
            "tier=b,zone=z1,legacy=",
            false),
        // one key twice: both requirements apply, so contradictions match nothing
        row(labelsAnd("app: web", notIn("app", "web")), "app=web", false),
        row(labelsAnd("app: web", notIn("app", "web")), "", false),
        row(
            "{matchExpressions: [{key: app, operator: Exists}, {key: app, operator: DoesNotExist}]}",
            "app=web",
            false),
        row(
            "{matchExpressions: [{key: app, operator: In, values: [a, b]},"
                + " {key: app, operator: In, values: [b, c]}]}",
            "app=b",
            true),
        row(
            "{matchExpressions: [{key: app, operator: In, values: [a, b]},"
                + " {key: app, operator: In, values: [b, c]}]}",
            "app=a",
            false));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("describeTable")
  void describesAsKubectlDoes(String selector, String expected) {
    assertThat(Selectors.describe(selector(selector))).isEqualTo(expected);
    assertThat(Selectors.parse(selector(selector))).hasToString(expected);
  }

  static Stream<Arguments> describeTable() {
    return Stream.of(
        Arguments.of(null, "<none>"),
        Arguments.of("{}", "<none>"),
        Arguments.of("{matchLabels: {}, matchExpressions: []}", "<none>"),
        Arguments.of("{matchLabels: {team: blue}}", "team=blue"),
        Arguments.of("{matchLabels: {team: \"\"}}", "team="),
        Arguments.of("{matchLabels: {zone: z1, app: web}}", "app=web,zone=z1"),
        Arguments.of(only(in("tier", "a")), "tier in (a)"),
        Arguments.of(only(in("tier", "b", "a", "c")), "tier in (a,b,c)"),
        Arguments.of(only(in("tier", "b", "a", "b")), "tier in (a,b,b)"),
        Arguments.of("{matchExpressions: [{key: t, operator: In, values: [\"\"]}]}", "t in ()"),
        Arguments.of(only(notIn("env", "test", "dev")), "env notin (dev,test)"),
        Arguments.of(only(exists("legacy")), "legacy"),
        Arguments.of(only(doesNotExist("legacy")), "!legacy"),
        Arguments.of(
            "{matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [b, a]},"
                + " {key: legacy, operator: DoesNotExist}]}",
            "app=web,!legacy,tier in (a,b)"),
        Arguments.of(
            labelsAnd("kubernetes.io/os: linux", exists("example.com/gpu")),
            "example.com/gpu,kubernetes.io/os=linux"),
        // one key twice: sorted stably, matchLabels before matchExpressions
        Arguments.of(
            "{matchLabels: {app: web}, matchExpressions: [{key: app, operator: NotIn, values: [x]},"
                + " {key: app, operator: Exists}]}",
            "app=web,app notin (x),app"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidTable")
  void refusesInvalidSelectorsNamingTheRequirement(String selector, String expectedMessage) {
    assertThatThrownBy(() -> Selectors.parse(selector(selector), "spec.nodeSelector"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(expectedMessage);
    assertThatThrownBy(() -> Selectors.matches(selector(selector), labels("tier=a,legacy=1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("selector is not a valid label selector: selector");
    assertThatThrownBy(() -> Selectors.describe(selector(selector)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  static Stream<Arguments> invalidTable() {
    String prefix = "spec.nodeSelector is not a valid label selector: spec.nodeSelector.";
    return Stream.of(
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: In, values: []}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: In, values: []}:"
                + " In needs at least one value in values"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: In}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: In, values: []}:"
                + " In needs at least one value in values"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: In, values: null}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: In, values: null}:"
                + " In needs at least one value in values"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: NotIn}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: NotIn, values: []}:"
                + " NotIn needs at least one value in values"),
        Arguments.of(
            "{matchExpressions: [{key: legacy, operator: Exists, values: [x]}]}",
            prefix
                + "matchExpressions[0] {key: legacy, operator: Exists, values: [x]}:"
                + " Exists takes no values, got 1"),
        Arguments.of(
            "{matchExpressions: [{key: legacy, operator: DoesNotExist, values: [x, y]}]}",
            prefix
                + "matchExpressions[0] {key: legacy, operator: DoesNotExist, values: [x, y]}:"
                + " DoesNotExist takes no values, got 2"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: in, values: [a]}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: in, values: [a]}:"
                + " operator must be one of In, NotIn, Exists, DoesNotExist"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: Gt, values: [\"1\"]}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: Gt, values: [1]}:"
                + " operator must be one of In, NotIn, Exists, DoesNotExist"),
        Arguments.of(
            "{matchExpressions: [{key: tier, values: [a]}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: null, values: [a]}:"
                + " operator must be one of In, NotIn, Exists, DoesNotExist"),
        Arguments.of(
            "{matchExpressions: [{operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: null, operator: Exists, values: []}: key is required"),
        Arguments.of(
            "{matchExpressions: [{key: bad key, operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: bad key, operator: Exists, values: []}: key \"bad"
                + " key\" has a name that is not alphanumeric characters, '-', '_' or '.',"
                + " starting and ending with an alphanumeric"),
        Arguments.of(
            "{matchExpressions: [{key: a/b/c, operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: a/b/c, operator: Exists, values: []}: key \"a/b/c\""
                + " has more than one '/' (write prefix/name, e.g. example.com/tier)"),
        Arguments.of(
            "{matchExpressions: [{key: /tier, operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: /tier, operator: Exists, values: []}: key \"/tier\""
                + " has an empty prefix before '/'"),
        Arguments.of(
            "{matchExpressions: [{key: Example.com/tier, operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: Example.com/tier, operator: Exists, values: []}:"
                + " key \"Example.com/tier\" has a prefix that is not a DNS subdomain (lowercase"
                + " alphanumerics, '-' and '.', at most 253 characters)"),
        Arguments.of(
            "{matchExpressions: [{key: example.com/, operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: example.com/, operator: Exists, values: []}:"
                + " key \"example.com/\" has an empty name"),
        Arguments.of(
            "{matchExpressions: [{key: " + "k".repeat(64) + ", operator: Exists}]}",
            prefix
                + "matchExpressions[0] {key: "
                + "k".repeat(64)
                + ", operator: Exists, values: []}: key \""
                + "k".repeat(64)
                + "\" has a name longer than 63 characters"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: In, values: [a, -b, \""
                + "v".repeat(64)
                + "\"]}]}",
            prefix
                + "matchExpressions[0] {key: tier, operator: In, values: [a, -b, "
                + "v".repeat(64)
                + "]}: value \"-b\" is not empty and not alphanumeric characters, '-', '_' or '.',"
                + " starting and ending with an alphanumeric; value \""
                + "v".repeat(64)
                + "\" is longer than 63 characters"),
        Arguments.of(
            "{matchLabels: {app: web server}}",
            prefix
                + "matchLabels[\"app\"]: value \"web server\" is not empty and not alphanumeric"
                + " characters, '-', '_' or '.', starting and ending with an alphanumeric"),
        Arguments.of(
            "{matchLabels: {app!: web}}",
            prefix
                + "matchLabels[\"app!\"]: key \"app!\" has a name that is not alphanumeric"
                + " characters, '-', '_' or '.', starting and ending with an alphanumeric"),
        Arguments.of("{matchLabels: {app: null}}", prefix + "matchLabels[\"app\"]: value is null"),
        Arguments.of("{matchExpressions: [null]}", prefix + "matchExpressions[0]: is null"),
        // a misspelt field would otherwise leave a selector that matches everything
        Arguments.of(
            "{matchLabel: {app: web}}",
            "spec.nodeSelector is not a valid label selector: spec.nodeSelector: unknown field(s)"
                + " matchLabel"),
        Arguments.of(
            "{matchExpressions: [{key: tier, operator: In, value: [a]}]}",
            prefix
                + "matchExpressions[0]: unknown field(s) value; "
                + "spec.nodeSelector.matchExpressions[0] {key: tier, operator: In, values: []}:"
                + " In needs at least one value in values"),
        // every problem at once, in the order written
        Arguments.of(
            "{matchLabels: {app: \"-\"}, matchExpressions: [{key: ok, operator: Exists},"
                + " {key: tier, operator: In}, {key: legacy, operator: Exists, values: [x]}]}",
            prefix
                + "matchLabels[\"app\"]: value \"-\" is not empty and not alphanumeric"
                + " characters, '-', '_' or '.', starting and ending with an alphanumeric; "
                + "spec.nodeSelector.matchExpressions[1] {key: tier, operator: In, values: []}:"
                + " In needs at least one value in values; "
                + "spec.nodeSelector.matchExpressions[2] {key: legacy, operator: Exists,"
                + " values: [x]}: Exists takes no values, got 1"));
  }

  @Test
  void acceptsKeysAndValuesAtTheirLimits() {
    String name = "n".repeat(63);
    String prefix = ("p".repeat(49) + ".").repeat(5) + "abc"; // 253 characters
    assertThat(prefix).hasSize(253);
    LabelSelector selector =
        new LabelSelectorBuilder()
            .addToMatchLabels(prefix + "/" + name, "v".repeat(63))
            .addToMatchLabels("a", "")
            .addToMatchLabels("A_b.c-D", "X_y.z-1")
            .build();
    assertThat(
            Selectors.matches(
                selector,
                Map.of(prefix + "/" + name, "v".repeat(63), "a", "", "A_b.c-D", "X_y.z-1")))
        .isTrue();

    LabelSelector tooLong =
        new LabelSelectorBuilder().addToMatchLabels("p" + prefix + "/" + name, "v").build();
    assertThatThrownBy(() -> Selectors.parse(tooLong))
        .hasMessageContaining("has a prefix that is not a DNS subdomain");
  }

  @Test
  void treatsNullLabelsAsNoLabels() {
    assertThat(Selectors.matches(selector(only(doesNotExist("legacy"))), null)).isTrue();
    assertThat(Selectors.matches(selector(only(exists("legacy"))), null)).isFalse();
    assertThat(Selectors.matches(null, null)).isTrue();
  }

  @Test
  void aLabelWithANullValueIsPresentButHoldsNoValue() {
    Map<String, String> labels = new HashMap<>();
    labels.put("tier", null);
    assertThat(Selectors.matches(selector(only(exists("tier"))), labels)).isTrue();
    assertThat(Selectors.matches(selector(only(in("tier", "a"))), labels)).isFalse();
    assertThat(Selectors.matches(selector(only(notIn("tier", "a"))), labels)).isTrue();
  }

  @Test
  void parsesOnceIntoAnImmutableSelector() {
    LabelSelector api =
        new LabelSelectorBuilder()
            .addToMatchLabels("team", "blue")
            .addNewMatchExpression()
            .withKey("tier")
            .withOperator("In")
            .withValues(new ArrayList<>(List.of("b", "a")))
            .endMatchExpression()
            .build();
    Selector selector = Selectors.parse(api, "spec.namespaceSelector");
    api.getMatchExpressions().get(0).getValues().clear();
    api.getMatchLabels().put("team", "red");

    assertThat(selector.requirements())
        .containsExactly(
            Requirement.equal("team", "blue"),
            new Requirement("tier", Operator.IN, List.of("b", "a")));
    assertThat(selector.matches(Map.of("team", "blue", "tier", "a"))).isTrue();
    assertThat(selector.matchesEverything()).isFalse();
    assertThat(Selectors.parse(null).matchesEverything()).isTrue();
    assertThat(Selectors.parse(new LabelSelector())).isEqualTo(Selector.EVERYTHING);
    assertThatThrownBy(() -> selector.requirements().add(Requirement.equal("a", "b")))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void readsTheMessageTheNodeDaemonWrites() {
    LabelSelector selector = new LabelSelectorBuilder().addToMatchLabels("team", "blue").build();
    String message =
        "namespace q0 does not match spec.namespaceSelector ("
            + Selectors.describe(selector)
            + ") of IPPool p";
    assertThat(Selectors.matches(selector, Map.of("team", "red"))).isFalse();
    assertThat(message)
        .isEqualTo("namespace q0 does not match spec.namespaceSelector (team=blue) of IPPool p");
  }

  @Test
  void requirementsCheckThemselves() {
    assertThatThrownBy(() -> new Requirement("app", Operator.EQUALS, List.of("a", "b")))
        .hasMessage("= takes exactly one value, got 2");
    assertThatThrownBy(() -> new Requirement("app", Operator.EQUALS, List.of()))
        .hasMessage("= takes exactly one value, got 0");
    assertThatThrownBy(() -> new Requirement("app", Operator.IN, null))
        .hasMessage("In needs at least one value in values");
    assertThatThrownBy(() -> new Requirement("app", Operator.IN, Arrays.asList("a", null)))
        .hasMessage("value is null");
    assertThatThrownBy(() -> new Requirement("a b", Operator.EXISTS, List.of("x")))
        .hasMessage(
            "key \"a b\" has a name that is not alphanumeric characters, '-', '_' or '.',"
                + " starting and ending with an alphanumeric; Exists takes no values, got 1");
    assertThatThrownBy(() -> new Requirement("app", null, List.of()))
        .isInstanceOf(NullPointerException.class);
    assertThat(new Requirement("app", Operator.EXISTS, null).values()).isEmpty();
  }

  @Test
  void operatorsAreSpelledExactlyAsTheApiSpellsThem() {
    assertThat(Operator.fromApiName("In")).contains(Operator.IN);
    assertThat(Operator.fromApiName("NotIn")).contains(Operator.NOT_IN);
    assertThat(Operator.fromApiName("Exists")).contains(Operator.EXISTS);
    assertThat(Operator.fromApiName("DoesNotExist")).contains(Operator.DOES_NOT_EXIST);
    assertThat(Operator.fromApiName("in")).isEmpty();
    assertThat(Operator.fromApiName("notin")).isEmpty();
    assertThat(Operator.fromApiName("=")).isEmpty();
    assertThat(Operator.fromApiName(null)).isEmpty();
  }

  private static Arguments row(String selector, String labels, boolean expected) {
    return Arguments.of(selector, labels, expected);
  }

  private static String in(String key, String... values) {
    return expression(key, "In", values);
  }

  private static String notIn(String key, String... values) {
    return expression(key, "NotIn", values);
  }

  private static String exists(String key) {
    return "{key: " + key + ", operator: Exists}";
  }

  private static String doesNotExist(String key) {
    return "{key: " + key + ", operator: DoesNotExist}";
  }

  private static String expression(String key, String operator, String... values) {
    return "{key: "
        + key
        + ", operator: "
        + operator
        + ", values: ["
        + String.join(", ", values)
        + "]}";
  }

  /** A selector of one expression. */
  private static String only(String expression) {
    return "{matchExpressions: [" + expression + "]}";
  }

  /** A selector of matchLabels (YAML map entries) and one expression. */
  private static String labelsAnd(String matchLabels, String expression) {
    return "{matchLabels: {" + matchLabels + "}, matchExpressions: [" + expression + "]}";
  }

  /** A selector from YAML as the API server would send it; {@code null} for an absent one. */
  static LabelSelector selector(String yaml) {
    try {
      return yaml == null ? null : YAML.readValue(yaml, LabelSelector.class);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("test selector is not YAML: " + yaml, e);
    }
  }

  /** Labels written as kubectl takes them: {@code app=web,tier=} (the empty string: none). */
  static Map<String, String> labels(String text) {
    Map<String, String> labels = new LinkedHashMap<>();
    if (!text.isEmpty()) {
      for (String pair : text.split(",")) {
        int eq = pair.indexOf('=');
        labels.put(pair.substring(0, eq), pair.substring(eq + 1));
      }
    }
    return labels;
  }
}
