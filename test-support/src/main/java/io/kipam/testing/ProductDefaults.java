package io.kipam.testing;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/**
 * An environment for a family's variant at the product's defaults ({@link
 * io.kipam.testing.Variants}): the timers the harness shortens for every kipam process are unset,
 * so that the process reads its own defaults, as a user's does.
 */
public final class ProductDefaults {

  private ProductDefaults() {}

  /**
   * An environment in which each of {@code names} is unset: mapped to {@code null}, which the
   * harnesses that start kipam's processes take as "leave it out".
   */
  public static Map<String, String> of(String... names) {
    Map<String, String> unset = new HashMap<>();
    for (String name : names) {
      unset.put(name, null);
    }
    return Collections.unmodifiableMap(unset);
  }

  /**
   * Puts {@code overrides} into {@code env}, a setting mapped to {@code null} (see {@link #of})
   * removed from it instead, so that the process started with {@code env} reads its own default.
   */
  public static void overlay(Map<String, String> env, Map<String, String> overrides) {
    overrides.forEach(
        (name, value) -> {
          if (value == null) {
            env.remove(name);
          } else {
            env.put(name, value);
          }
        });
  }

  /**
   * A timer family ({@link Variants}) whose variant is the environment of a kipam process: {@code
   * values} (labelled {@code shortened}), and the same settings unset, so the process reads its
   * defaults. The source of a parameterized test, {@code @MethodSource}.
   */
  public static Stream<Named<Map<String, String>>> timerFamily(
      String name, String shortened, Map<String, String> values) {
    return Variants.<Map<String, String>>family(name)
        .shortened(shortened, values)
        .defaults(of(values.keySet().toArray(String[]::new)))
        .draw();
  }
}
