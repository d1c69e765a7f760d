package io.kipam.system.bench;

import java.util.Arrays;

/** The sizes a scale benchmark measures, from a comma-separated system property. */
final class Sizes {

  private Sizes() {}

  /** The whole numbers of {@code property} ("50,500,5000"), else of {@code defaults}. */
  static int[] of(String property, String defaults) {
    return Arrays.stream(System.getProperty(property, defaults).split(","))
        .map(String::trim)
        .mapToInt(Integer::parseInt)
        .toArray();
  }
}
