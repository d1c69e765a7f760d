package io.kipam.cni.shim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for the CNI executable, which may use nothing but java.base: reading the two
 * values it needs from the network configuration ({@code cniVersion} and {@code ipam.socket}) and
 * quoting strings for the messages it writes. Everything else about the configuration is the
 * daemon's business, so this reader is lenient about what it does not need and never throws: an
 * unreadable configuration yields an empty map, and the daemon reports the problem properly.
 * Objects and lists nested deeper than {@link #MAX_DEPTH} make a configuration unreadable, so that
 * no input can exhaust the stack of this recursive reader.
 */
final class MiniJson {

  /** Far deeper than any network configuration, and far shallower than the stack allows. */
  static final int MAX_DEPTH = 128;

  private final String text;
  private int pos;
  private int depth;

  private MiniJson(String text) {
    this.text = text;
  }

  /** The top-level object of {@code text}, or an empty map if it is not a readable JSON object. */
  static Map<String, Object> parseObject(String text) {
    try {
      MiniJson reader = new MiniJson(text);
      Object value = reader.value();
      reader.skipSpace();
      if (value instanceof Map<?, ?> map && reader.pos == text.length()) {
        @SuppressWarnings("unchecked")
        Map<String, Object> object = (Map<String, Object>) map;
        return object;
      }
    } catch (RuntimeException e) {
      // Malformed: the daemon parses the same bytes and explains what is wrong.
    }
    return Map.of();
  }

  /** {@code s} as a JSON string literal. */
  static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

  private Object value() {
    skipSpace();
    char c = text.charAt(pos);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Map<String, Object> object() {
    enter();
    Map<String, Object> map = new LinkedHashMap<>();
    pos++;
    skipSpace();
    if (text.charAt(pos) == '}') {
      pos++;
      depth--;
      return map;
    }
    while (true) {
      skipSpace();
      String key = string();
      skipSpace();
      expect(':');
      map.put(key, value());
      skipSpace();
      if (text.charAt(pos) == ',') {
        pos++;
      } else {
        expect('}');
        depth--;
        return map;
      }
    }
  }

  private List<Object> array() {
    enter();
    List<Object> list = new ArrayList<>();
    pos++;
    skipSpace();
    if (text.charAt(pos) == ']') {
      pos++;
      depth--;
      return list;
    }
    while (true) {
      list.add(value());
      skipSpace();
      if (text.charAt(pos) == ',') {
        pos++;
      } else {
        expect(']');
        depth--;
        return list;
      }
    }
  }

  private void enter() {
    if (++depth > MAX_DEPTH) {
      throw new IllegalArgumentException("nested deeper than " + MAX_DEPTH + " levels at " + pos);
    }
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      char c = text.charAt(pos++);
      if (c == '"') {
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = text.charAt(pos++);
      switch (e) {
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'u' -> {
          out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
          pos += 4;
        }
        default -> out.append(e);
      }
    }
  }

  private Object number() {
    int start = pos;
    while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
      pos++;
    }
    if (start == pos) {
      throw new IllegalArgumentException("unexpected character at " + pos);
    }
    return Double.parseDouble(text.substring(start, pos));
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, pos)) {
      throw new IllegalArgumentException("unexpected literal at " + pos);
    }
    pos += word.length();
    return value;
  }

  private void expect(char c) {
    if (text.charAt(pos) != c) {
      throw new IllegalArgumentException("expected '" + c + "' at " + pos);
    }
    pos++;
  }

  private void skipSpace() {
    while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
      pos++;
    }
  }
}
