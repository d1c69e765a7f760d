package io.kipam.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/**
 * The timer variants of a test family, drawn from the run's seed. A test may shorten a timer that
 * is not what it is about, but every family keeps a variant at the product's defaults, because that
 * is what users get. Rather than run every variant every time, a run draws one per family from its
 * seed, so that over many runs every variant runs, and a failure names the seed that repeats it.
 *
 * <p>A family is a parameterized test whose source is {@link Family#draw}:
 *
 * <pre>{@code
 * static Stream<Named<Map<String, String>>> settle() {
 *   return Variants.family("daemon settle")
 *       .shortened("settle 5 s", Map.of("KIPAM_SETTLE_SECONDS", "5"))
 *       .defaults(Map.of("KIPAM_SETTLE_SECONDS", "30"))
 *       .draw();
 * }
 * }</pre>
 *
 * <p>{@code -Dkipam.seed=N} repeats a run's draws; {@code -Dkipam.variants=all} runs every variant,
 * {@code defaults} only the defaults, {@code shortened} only the shortened ones. Without a seed the
 * build's start time is the seed (one for all modules of a build, {@code kipam.runSeed}), else the
 * clock's.
 */
public final class Variants {

  /** The seed of this run's draws, printed when the first family draws. */
  public static final long SEED = seed();

  private static final String MODE =
      System.getProperty("kipam.variants", "drawn").strip().toLowerCase(Locale.ROOT);

  private static boolean printed;

  private Variants() {}

  private static long seed() {
    String given = System.getProperty("kipam.seed", "").strip();
    if (!given.isEmpty()) {
      return Long.parseLong(given);
    }
    String run = System.getProperty("kipam.runSeed", "").strip();
    return run.matches("\\d{1,18}") ? Long.parseLong(run) : System.currentTimeMillis();
  }

  /** A family of variants, named as it appears in {@code docs/development.md}'s timer table. */
  public static <T> Family<T> family(String name) {
    return new Family<>(name, List.of(), null);
  }

  /** The variants of one family: shortened ones and the product's defaults. */
  public static final class Family<T> {
    private final String name;
    private final List<Named<T>> shortened;
    private final T defaults;

    private Family(String name, List<Named<T>> shortened, T defaults) {
      this.name = name;
      this.shortened = shortened;
      this.defaults = defaults;
    }

    /** A variant that shortens the family's timers, named for what it shortens. */
    public Family<T> shortened(String label, T settings) {
      List<Named<T>> more = new ArrayList<>(shortened);
      more.add(Named.of(label, settings));
      return new Family<>(name, List.copyOf(more), defaults);
    }

    /** The variant at the product's defaults (the settings that restate them). */
    public Family<T> defaults(T settings) {
      return new Family<>(name, shortened, settings);
    }

    /** This run's variants of the family: one drawn from the seed, or as -Dkipam.variants says. */
    public Stream<Named<T>> draw() {
      List<Named<T>> chosen = chosen(SEED, MODE);
      announce();
      System.out.printf(
          "[variants] %s: %s (of %s)%n",
          name, chosen.stream().map(Named::getName).toList(), names());
      return chosen.stream();
    }

    /** The variants a run with {@code seed} and {@code mode} (-Dkipam.variants) runs. */
    List<Named<T>> chosen(long seed, String mode) {
      if (defaults == null || shortened.isEmpty()) {
        throw new IllegalStateException(
            "family " + name + " needs a shortened variant and one at the product's defaults");
      }
      List<Named<T>> every = every();
      return switch (mode) {
        case "all" -> every;
        case "defaults" -> List.of(every.get(every.size() - 1));
        case "shortened" -> shortened;
        case "drawn" ->
            List.of(
                every.get(new SplittableRandom(seed * 31 + name.hashCode()).nextInt(every.size())));
        default ->
            throw new IllegalArgumentException(
                "-Dkipam.variants="
                    + mode
                    + " is none of drawn (the default), all, defaults, shortened");
      };
    }

    private List<Named<T>> every() {
      List<Named<T>> every = new ArrayList<>(shortened);
      every.add(Named.of(DEFAULTS, defaults));
      return every;
    }

    private List<String> names() {
      return every().stream().map(Named::getName).toList();
    }
  }

  /** The name of every family's variant at the product's defaults. */
  public static final String DEFAULTS = "at the product's defaults";

  private static synchronized void announce() {
    if (!printed) {
      printed = true;
      System.out.printf(
          "[variants] seed %d, %s (-Dkipam.seed=%d repeats these draws; -Dkipam.variants=all"
              + " runs every variant)%n",
          SEED, MODE, SEED);
    }
  }
}
