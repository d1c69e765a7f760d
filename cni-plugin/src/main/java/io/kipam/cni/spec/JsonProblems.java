package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads fields of a JSON document by path and collects what is wrong with them, so that one error
 * names every invalid field ("ipam.pools[1] ... . ipam.socket ...") instead of the first; problems
 * are joined with ". " because a problem's own fix follows a "; ". Wrongly typed values are
 * described by their type only; values are quoted only where a rule about their text failed.
 */
final class JsonProblems {

  private final List<String> invalid = new ArrayList<>();
  private final List<String> unsupported = new ArrayList<>();

  /** An invalid value at {@code path} (code 7). */
  void add(String path, String text) {
    invalid.add(path + " " + text);
  }

  /** A field kipam does not support at {@code path} (code 2). */
  void unsupported(String path, String text) {
    unsupported.add(path + " " + text);
  }

  boolean isEmpty() {
    return invalid.isEmpty() && unsupported.isEmpty();
  }

  /** How many invalid values have been reported so far (unsupported fields not counted). */
  int count() {
    return invalid.size();
  }

  /**
   * @throws CniException code 7 listing every problem if any value is invalid, else code 2 if only
   *     unsupported fields were found
   */
  void throwIfAny(String msg) {
    if (!invalid.isEmpty()) {
      List<String> all = new ArrayList<>(invalid);
      all.addAll(unsupported);
      throw new CniException(CniErrorCode.INVALID_NETWORK_CONFIG, msg, String.join(". ", all));
    }
    if (!unsupported.isEmpty()) {
      throw new CniException(
          CniErrorCode.UNSUPPORTED_FIELD,
          "unsupported field in network configuration",
          String.join(". ", unsupported));
    }
  }

  static String path(String parent, String key) {
    return parent.isEmpty() ? key : parent + "." + key;
  }

  static String index(String parent, int i) {
    return parent + "[" + i + "]";
  }

  /** The JSON type of {@code node} in words, for messages that must not quote the value. */
  static String typeOf(JsonNode node) {
    return switch (node.getNodeType()) {
      case ARRAY -> "a list";
      case OBJECT -> "an object";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      default -> node.getNodeType().name().toLowerCase(Locale.ROOT);
    };
  }

  /** The member {@code key} of {@code object}; absent for a missing member or JSON null. */
  static Optional<JsonNode> member(JsonNode object, String key) {
    JsonNode value = object.get(key);
    return value == null || value.isNull() ? Optional.empty() : Optional.of(value);
  }

  Optional<String> string(JsonNode object, String parent, String key, boolean required) {
    return typed(object, parent, key, required, JsonNode::isTextual, "a string")
        .map(JsonNode::textValue);
  }

  Optional<Boolean> bool(JsonNode object, String parent, String key) {
    return typed(object, parent, key, false, JsonNode::isBoolean, "a boolean")
        .map(JsonNode::booleanValue);
  }

  Optional<JsonNode> object(JsonNode object, String parent, String key, boolean required) {
    return typed(object, parent, key, required, JsonNode::isObject, "an object");
  }

  /** The elements of the list {@code key}; empty if it is absent or not a list. */
  Optional<List<JsonNode>> array(JsonNode object, String parent, String key, boolean required) {
    return typed(object, parent, key, required, JsonNode::isArray, "a list")
        .map(
            list -> {
              List<JsonNode> elements = new ArrayList<>();
              list.elements().forEachRemaining(elements::add);
              return elements;
            });
  }

  /**
   * The member {@code key} if it has the expected JSON type; a missing required member or one of
   * another type is reported under its path.
   */
  private Optional<JsonNode> typed(
      JsonNode object,
      String parent,
      String key,
      boolean required,
      java.util.function.Predicate<JsonNode> isType,
      String typeName) {
    String path = path(parent, key);
    Optional<JsonNode> value = member(object, key);
    if (value.isEmpty()) {
      if (required) {
        add(path, "is required");
      }
      return Optional.empty();
    }
    if (!isType.test(value.get())) {
      add(path, "must be " + typeName + ", not " + typeOf(value.get()));
      return Optional.empty();
    }
    return value;
  }

  /** The strings of the list {@code key}; elements that are not strings are reported. */
  List<String> strings(JsonNode object, String parent, String key) {
    List<String> strings = new ArrayList<>();
    List<JsonNode> elements = array(object, parent, key, false).orElse(List.of());
    for (int i = 0; i < elements.size(); i++) {
      JsonNode element = elements.get(i);
      if (element.isTextual()) {
        strings.add(element.textValue());
      } else {
        add(index(path(parent, key), i), "must be a string, not " + typeOf(element));
      }
    }
    return strings;
  }
}
