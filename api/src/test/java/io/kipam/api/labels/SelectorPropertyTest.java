package io.kipam.api.labels;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Random selectors over a few keys and values, so that keys collide and labels hit and miss: the
 * laws that make a selector a conjunction of independent requirements.
 */
class SelectorPropertyTest {

  private static final List<String> KEYS = List.of("app", "tier", "example.com/zone");
  private static final List<String> VALUES = List.of("", "a", "b");
  private static final List<String> OPERATORS = List.of("In", "NotIn", "Exists", "DoesNotExist");

  @Test
  void aSelectorMatchesWhenEachOfItsRequirementsDoesAlone() {
    Random random = new Random(20261122L);
    for (int i = 0; i < 5_000; i++) {
      LabelSelector selector = randomSelector(random);
      Map<String, String> labels = randomLabels(random);

      boolean each = true;
      for (LabelSelector single : split(selector)) {
        each &= Selectors.matches(single, labels);
      }
      assertThat(Selectors.matches(selector, labels))
          .as("%s on %s", selector, labels)
          .isEqualTo(each);
    }
  }

  @Test
  void orderOfRequirementsChangesNeitherMatchNorDescription() {
    Random random = new Random(7L);
    for (int i = 0; i < 2_000; i++) {
      LabelSelector selector = randomSelector(random);
      LabelSelector shuffled = copy(selector);
      Collections.shuffle(shuffled.getMatchExpressions(), random);
      shuffled.getMatchExpressions().forEach(e -> Collections.shuffle(e.getValues(), random));
      Map<String, String> labels = randomLabels(random);

      assertThat(Selectors.matches(shuffled, labels))
          .isEqualTo(Selectors.matches(selector, labels));
      if (!hasRepeatedExpressionKey(selector)) {
        assertThat(Selectors.describe(shuffled)).isEqualTo(Selectors.describe(selector));
      }
    }
  }

  @Test
  void negatedOperatorsAreComplements() {
    Random random = new Random(99L);
    for (int i = 0; i < 2_000; i++) {
      String key = pick(random, KEYS);
      List<String> values = randomValues(random);
      Map<String, String> labels = randomLabels(random);

      assertThat(matches(key, "NotIn", values, labels))
          .isEqualTo(!matches(key, "In", values, labels));
      assertThat(matches(key, "DoesNotExist", List.of(), labels))
          .isEqualTo(!matches(key, "Exists", List.of(), labels));
      assertThat(matches(key, "In", values, labels))
          .as("In is Exists and one of the values")
          .isEqualTo(labels.containsKey(key) && values.contains(labels.get(key)));
    }
  }

  private static boolean matches(
      String key, String operator, List<String> values, Map<String, String> labels) {
    LabelSelector selector = new LabelSelector();
    selector.getMatchExpressions().add(new LabelSelectorRequirement(key, operator, values));
    return Selectors.matches(selector, labels);
  }

  private static LabelSelector randomSelector(Random random) {
    LabelSelector selector = new LabelSelector();
    for (int i = random.nextInt(3); i > 0; i--) {
      selector.getMatchLabels().put(pick(random, KEYS), pick(random, VALUES));
    }
    for (int i = random.nextInt(4); i > 0; i--) {
      String operator = pick(random, OPERATORS);
      List<String> values =
          operator.endsWith("In") ? randomValues(random) : new ArrayList<String>();
      selector
          .getMatchExpressions()
          .add(new LabelSelectorRequirement(pick(random, KEYS), operator, values));
    }
    return selector;
  }

  private static List<String> randomValues(Random random) {
    List<String> values = new ArrayList<>();
    for (int i = 1 + random.nextInt(3); i > 0; i--) {
      values.add(pick(random, VALUES));
    }
    return values;
  }

  private static Map<String, String> randomLabels(Random random) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String key : KEYS) {
      if (random.nextBoolean()) {
        labels.put(key, pick(random, VALUES));
      }
    }
    return labels;
  }

  /** One selector per requirement. */
  private static List<LabelSelector> split(LabelSelector selector) {
    List<LabelSelector> singles = new ArrayList<>();
    selector
        .getMatchLabels()
        .forEach(
            (key, value) -> {
              LabelSelector single = new LabelSelector();
              single.getMatchLabels().put(key, value);
              singles.add(single);
            });
    for (LabelSelectorRequirement expression : selector.getMatchExpressions()) {
      LabelSelector single = new LabelSelector();
      single.getMatchExpressions().add(expression);
      singles.add(single);
    }
    return singles;
  }

  private static LabelSelector copy(LabelSelector selector) {
    LabelSelector copy = new LabelSelector();
    copy.getMatchLabels().putAll(selector.getMatchLabels());
    for (LabelSelectorRequirement e : selector.getMatchExpressions()) {
      copy.getMatchExpressions()
          .add(
              new LabelSelectorRequirement(
                  e.getKey(), e.getOperator(), new ArrayList<>(e.getValues())));
    }
    return copy;
  }

  /** Requirements on one key keep their given order in the description, as in kubectl. */
  private static boolean hasRepeatedExpressionKey(LabelSelector selector) {
    List<String> keys = new ArrayList<>(selector.getMatchLabels().keySet());
    for (LabelSelectorRequirement e : selector.getMatchExpressions()) {
      if (keys.contains(e.getKey())) {
        return true;
      }
      keys.add(e.getKey());
    }
    return false;
  }

  private static <T> T pick(Random random, List<T> from) {
    return from.get(random.nextInt(from.size()));
  }
}
