package io.kipam.api;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The value of {@link ApiConstants#ANNOTATION_DEMAND}: the names of the pools a node is short of,
 * sorted and separated by commas (pool names are DNS subdomains, so they hold no comma). An absent
 * or empty annotation is no demand; anything that is not a pool name is left out. An entry {@code
 * <pool>@<slot CIDR>} asks for one slot to become Shared: a chosen address lies in it, held
 * Exclusive by another node ({@link #slots}). An entry {@code at=<RFC 3339 time>} says when the
 * daemon last recorded the demand ({@link #recordedAt}); it reads as neither a pool nor a slot, so
 * a reader that does not know it ignores it, and a value without it (written by a kipam-node of an
 * earlier version) reads as before.
 */
public final class DemandAnnotation {

  private static final String AT = "at=";

  private DemandAnnotation() {}

  /** The pools named by a Node's annotations (null: none). */
  public static Set<String> pools(Map<String, String> annotations) {
    Set<String> pools = new TreeSet<>();
    String value = annotations == null ? null : annotations.get(ApiConstants.ANNOTATION_DEMAND);
    if (value == null) {
      return pools;
    }
    for (String part : value.split(",")) {
      String pool = part.strip();
      if (!pool.isEmpty() && pool.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?")) {
        pools.add(pool);
      }
    }
    return pools;
  }

  /** The slots named by a Node's annotations, as {@code <pool>@<slot CIDR>} (null: none). */
  public static Set<String> slots(Map<String, String> annotations) {
    Set<String> slots = new TreeSet<>();
    String value = annotations == null ? null : annotations.get(ApiConstants.ANNOTATION_DEMAND);
    if (value == null) {
      return slots;
    }
    for (String part : value.split(",")) {
      String entry = part.strip();
      if (entry.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?@[0-9a-fA-F.:]+/[0-9]{1,3}")) {
        slots.add(entry);
      }
    }
    return slots;
  }

  /** When the demand was last recorded ({@code at=} entry); empty when absent or unreadable. */
  public static Optional<Instant> recordedAt(Map<String, String> annotations) {
    String value = annotations == null ? null : annotations.get(ApiConstants.ANNOTATION_DEMAND);
    if (value == null) {
      return Optional.empty();
    }
    for (String part : value.split(",")) {
      String entry = part.strip();
      if (entry.startsWith(AT)) {
        try {
          return Optional.of(Instant.parse(entry.substring(AT.length())));
        } catch (DateTimeParseException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  /** The entry of {@link #slots} for {@code slot} of {@code pool}. */
  public static String slot(String pool, String slot) {
    return pool + "@" + slot;
  }

  /** The annotation's value for {@code pools}; null (remove the annotation) when there are none. */
  public static String format(Set<String> pools) {
    return pools.isEmpty() ? null : String.join(",", new TreeSet<>(pools));
  }

  /**
   * The annotation's value for {@code entries} (pools and slots) recorded {@code at} (to the
   * second); null (remove the annotation) when there are none.
   */
  public static String format(Set<String> entries, Instant at) {
    return entries.isEmpty()
        ? null
        : AT + at.truncatedTo(ChronoUnit.SECONDS) + "," + format(entries);
  }
}
