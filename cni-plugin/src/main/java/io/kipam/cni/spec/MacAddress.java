package io.kipam.cni.spec;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An Ethernet (EUI-48) MAC address as kipam stores it: six lower-case hex octets joined by ':'.
 * Accepts ':' or '-' separators in either case on input, so a MAC passed by a runtime compares
 * equal to the same MAC stored on an IPAddress.
 */
final class MacAddress {

  private static final Pattern EUI48 =
      Pattern.compile("[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\\1[0-9a-fA-F]{2}){4}");

  private MacAddress() {}

  /** The canonical form of {@code text}, or empty if it is not an EUI-48 MAC address. */
  static Optional<String> normalize(String text) {
    if (!EUI48.matcher(text).matches()) {
      return Optional.empty();
    }
    return Optional.of(text.replace('-', ':').toLowerCase(Locale.ROOT));
  }
}
