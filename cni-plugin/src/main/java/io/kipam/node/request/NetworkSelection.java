package io.kipam.node.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pod's network-selection elements, as the multi-network standard writes them in the annotation
 * {@code k8s.v1.cni.cncf.io/networks}: a JSON list of objects ({@code name}, {@code namespace},
 * {@code interface}, {@code ipam-claim-reference}, ...) or the short form {@code
 * [namespace/]name[@interface]}, comma-separated. kipam reads only which IPAMClaim the element of
 * the attachment it is called for names.
 *
 * <p>Which element is the attachment's: the one whose {@code interface} is the call's CNI_IFNAME;
 * an element without {@code interface} gets the name Multus gives it, {@code net<n>} for the n-th
 * element (1-based), so the first secondary network of a pod is {@code net1}.
 */
public final class NetworkSelection {

  /** The annotation that holds a pod's network-selection elements. */
  public static final String ANNOTATION = "k8s.v1.cni.cncf.io/networks";

  /** The element key that names an IPAMClaim. */
  public static final String CLAIM_KEY = "ipam-claim-reference";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** One element: the network it selects, the interface it makes, the claim it names (or null). */
  public record Element(String network, String namespace, String ifName, String claim) {}

  /** The annotation cannot be read; the message names what is wrong. */
  public static final class MalformedException extends Exception {
    public MalformedException(String message) {
      super(message);
    }
  }

  private NetworkSelection() {}

  /** Every element of {@code annotation} (null or blank: none), with its interface name. */
  public static List<Element> parse(String annotation) throws MalformedException {
    if (annotation == null || annotation.isBlank()) {
      return List.of();
    }
    String text = annotation.trim();
    return text.startsWith("[") ? json(text) : shortForm(text);
  }

  /** The element whose interface is {@code ifName}, if any. */
  public static Optional<Element> forInterface(String annotation, String ifName)
      throws MalformedException {
    return parse(annotation).stream().filter(e -> e.ifName().equals(ifName)).findFirst();
  }

  private static List<Element> json(String text) throws MalformedException {
    JsonNode root;
    try {
      root = JSON.readTree(text);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new MalformedException(
          "annotation " + ANNOTATION + " is not a JSON list: " + e.getOriginalMessage());
    }
    if (!root.isArray()) {
      throw new MalformedException("annotation " + ANNOTATION + " must be a JSON list");
    }
    List<Element> elements = new ArrayList<>();
    for (int i = 0; i < root.size(); i++) {
      JsonNode node = root.get(i);
      String at = "annotation " + ANNOTATION + " element " + i;
      if (!node.isObject()) {
        throw new MalformedException(at + " must be an object");
      }
      String name = text(node, "name", at);
      if (name == null || name.isEmpty()) {
        throw new MalformedException(at + " has no name");
      }
      String ifName = text(node, "interface", at);
      elements.add(
          new Element(
              name,
              text(node, "namespace", at),
              ifName == null || ifName.isEmpty() ? defaultInterface(i) : ifName,
              emptyToNull(text(node, CLAIM_KEY, at))));
    }
    return elements;
  }

  private static String text(JsonNode node, String key, String at) throws MalformedException {
    JsonNode value = node.get(key);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw new MalformedException(at + ": " + key + " must be a string");
    }
    return value.textValue();
  }

  private static List<Element> shortForm(String text) throws MalformedException {
    List<Element> elements = new ArrayList<>();
    String[] parts = text.split(",");
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i].trim();
      if (part.isEmpty()) {
        throw new MalformedException(
            "annotation " + ANNOTATION + " has an empty element at position " + i);
      }
      String ifName = defaultInterface(i);
      int at = part.indexOf('@');
      if (at >= 0) {
        ifName = part.substring(at + 1);
        part = part.substring(0, at);
      }
      String namespace = null;
      int slash = part.indexOf('/');
      if (slash >= 0) {
        namespace = part.substring(0, slash);
        part = part.substring(slash + 1);
      }
      if (part.isEmpty() || ifName.isEmpty()) {
        throw new MalformedException(
            "annotation " + ANNOTATION + " element " + parts[i].trim() + " names no network");
      }
      elements.add(new Element(part, namespace, ifName, null));
    }
    return elements;
  }

  /** The interface name Multus gives the element at {@code index} (0-based) without one. */
  static String defaultInterface(int index) {
    return "net" + (index + 1);
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
