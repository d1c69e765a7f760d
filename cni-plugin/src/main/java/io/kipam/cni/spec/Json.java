package io.kipam.cni.spec;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;

/**
 * The one JSON mapper of this package and the rules for talking about input in messages. Parsing is
 * strict (duplicate keys and trailing content are errors, because two readers could disagree on
 * what such a document means), and a syntax error is reported by position only: Jackson's own
 * messages quote the offending token, which may be part of a credential.
 */
final class Json {

  static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
          .build();

  /** Quoted values longer than this are cut: a message names a value, it does not reproduce it. */
  private static final int MAX_QUOTED = 80;

  private Json() {}

  /** Compact JSON text of {@code node}. */
  static String write(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      // Only trees built in this package are written; they always serialise.
      throw new IllegalStateException("cannot write JSON", e);
    }
  }

  /**
   * Parses {@code bytes} as one JSON value.
   *
   * @param what what the bytes are, for the message ("the network configuration")
   * @throws CniException code 6 naming the line and column of the first syntax error
   */
  static JsonNode read(byte[] bytes, String what) {
    try {
      JsonNode node = MAPPER.readTree(bytes);
      if (node == null || node.isMissingNode()) {
        throw new CniException(
            CniErrorCode.DECODING_FAILURE,
            "cannot decode " + what,
            what + " is empty; a JSON object is expected");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new CniException(
          CniErrorCode.DECODING_FAILURE,
          "cannot decode " + what,
          what + " is not valid JSON: " + problem(e) + " near " + position(e.getLocation()));
    } catch (IOException e) {
      // Reading a byte array does no I/O: what is left is undecodable text, e.g. invalid UTF-8.
      throw new CniException(
          CniErrorCode.DECODING_FAILURE,
          "cannot decode " + what,
          what + " is not UTF-8 encoded JSON");
    }
  }

  private static String problem(JsonProcessingException e) {
    if (e instanceof JsonEOFException) {
      return "the document ends before its value is complete";
    }
    String original = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    if (original.startsWith("Duplicate field")) {
      return "a key appears twice in the same object";
    }
    if (original.startsWith("Trailing token")) {
      return "there is more content after the first JSON value";
    }
    if (e instanceof com.fasterxml.jackson.core.exc.StreamConstraintsException) {
      // Jackson's own cap (1,000 levels by default) keeps deep input from exhausting the stack.
      return "it is nested too deeply (" + original + ")";
    }
    return "unexpected character or token";
  }

  // Jackson reports where it stopped reading, which for a bad token is just after it: "near".
  private static String position(JsonLocation location) {
    if (location == null) {
      return "an unknown position";
    }
    return "line "
        + location.getLineNr()
        + ", column "
        + location.getColumnNr()
        + " (byte "
        + location.getByteOffset()
        + ")";
  }

  /**
   * {@code value} in single quotes for a message, cut to a readable length and with control
   * characters escaped so that a message stays on one line.
   */
  static String quote(String value) {
    StringBuilder quoted = new StringBuilder("'");
    int end = Math.min(value.length(), MAX_QUOTED);
    for (int i = 0; i < end; i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        quoted.append(String.format("\\u%04x", (int) c));
      } else {
        quoted.append(c);
      }
    }
    if (value.length() > MAX_QUOTED) {
      quoted.append("...(").append(value.length()).append(" characters)");
    }
    return quoted.append('\'').toString();
  }
}
