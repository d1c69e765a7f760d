package io.kipam.operator.cli.importer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads the CNI configuration of a NetworkAttachmentDefinition ({@code spec.config}) the way
 * whereabouts reads its IPAM section: a single plugin or a list ({@code plugins}), the plugin whose
 * {@code ipam.type} is {@code whereabouts}, its {@code range} (with {@code range_start}, {@code
 * range_end}, {@code exclude}) and {@code ipRanges}, {@code network_name} and {@code gateway}. A
 * configuration whose IPAM is not whereabouts is not this importer's and gives an empty result;
 * every problem is reported with the object and the JSON path of the field, all at once.
 */
public final class NadConfigParser {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** What one NetworkAttachmentDefinition gave: its network, or the problems that kept it out. */
  public record Parsed(
      Optional<WhereaboutsNetwork> network,
      Optional<SwitchedNetwork> switched,
      List<BadInput> problems) {
    Parsed(Optional<WhereaboutsNetwork> network, List<BadInput> problems) {
      this(network, Optional.empty(), problems);
    }
  }

  private NadConfigParser() {}

  public static Parsed parse(String namespace, String name, String config) {
    String object = "NetworkAttachmentDefinition " + namespace + "/" + name;
    List<BadInput> problems = new ArrayList<>();
    if (config == null || config.isBlank()) {
      return new Parsed(Optional.empty(), List.of()); // a NAD without config: not whereabouts'
    }
    JsonNode root;
    try {
      root = JSON.readTree(config);
    } catch (Exception e) {
      problems.add(
          new BadInput(object, "spec.config", "is not JSON: " + firstLine(e.getMessage())));
      return new Parsed(Optional.empty(), problems);
    }
    if (root == null || !root.isObject()) {
      problems.add(new BadInput(object, "spec.config", "is not a JSON object"));
      return new Parsed(Optional.empty(), problems);
    }
    JsonNode ipam = null;
    String path = null;
    JsonNode plugins = root.get("plugins");
    if (plugins != null && plugins.isArray()) {
      for (int i = 0; i < plugins.size(); i++) {
        JsonNode candidate = plugins.get(i).path("ipam");
        if ("whereabouts".equals(candidate.path("type").asText())) {
          ipam = candidate;
          path = "spec.config.plugins[" + i + "].ipam";
          break;
        }
      }
    } else if ("whereabouts".equals(root.path("ipam").path("type").asText())) {
      ipam = root.get("ipam");
      path = "spec.config.ipam";
    }
    if (ipam == null) {
      return new Parsed(Optional.empty(), kipam(namespace + "/" + name, root), List.of());
    }
    String cniName = root.path("name").asText("");
    if (cniName.isEmpty()) {
      problems.add(new BadInput(object, "spec.config.name", "is missing"));
    }
    String networkName = text(ipam, "network_name", object, path, problems);
    String sliceSize = text(ipam, "node_slice_size", object, path, problems);
    if (!sliceSize.isEmpty()) {
      problems.add(
          new BadInput(
              object,
              path + ".node_slice_size",
              "whereabouts' node-slice mode is not imported (only its IPPools of whole ranges)"));
    }
    String gateway = text(ipam, "gateway", object, path, problems);
    List<WhereaboutsRange> ranges = new ArrayList<>();
    if (ipam.hasNonNull("range")) {
      range(ipam, gateway, object, path, problems).ifPresent(ranges::add);
    }
    JsonNode ipRanges = ipam.get("ipRanges");
    if (ipRanges != null && !ipRanges.isNull()) {
      if (!ipRanges.isArray()) {
        problems.add(new BadInput(object, path + ".ipRanges", "is not a list"));
      } else {
        for (int i = 0; i < ipRanges.size(); i++) {
          range(ipRanges.get(i), gateway, object, path + ".ipRanges[" + i + "]", problems)
              .ifPresent(ranges::add);
        }
      }
    }
    if (ranges.isEmpty() && problems.isEmpty()) {
      problems.add(new BadInput(object, path + ".range", "no range and no ipRanges"));
    }
    if (!problems.isEmpty()) {
      return new Parsed(Optional.empty(), problems);
    }
    return new Parsed(
        Optional.of(
            new WhereaboutsNetwork(
                namespace + "/" + name, cniName, networkName, List.copyOf(ranges))),
        List.of());
  }

  /** The kipam IPAM of a switched configuration (single plugin or list), if that is what it is. */
  private static Optional<SwitchedNetwork> kipam(String nad, JsonNode root) {
    List<JsonNode> ipams = new ArrayList<>();
    root.path("plugins").forEach(p -> ipams.add(p.path("ipam")));
    ipams.add(root.path("ipam"));
    for (JsonNode ipam : ipams) {
      if ("kipam".equals(ipam.path("type").asText())) {
        List<String> pools = new ArrayList<>();
        ipam.path("pools").forEach(p -> pools.add(p.asText()));
        return Optional.of(new SwitchedNetwork(nad, root.path("name").asText(""), pools));
      }
    }
    return Optional.empty();
  }

  private static Optional<WhereaboutsRange> range(
      JsonNode node, String gateway, String object, String path, List<BadInput> problems) {
    int before = problems.size();
    String text = text(node, "range", object, path, problems).trim();
    IpAddress start = address(node, "range_start", object, path, problems);
    IpAddress end = address(node, "range_end", object, path, problems);
    List<String> exclude = new ArrayList<>();
    JsonNode excludes = node.get("exclude");
    if (excludes != null && !excludes.isNull()) {
      if (!excludes.isArray()) {
        problems.add(new BadInput(object, path + ".exclude", "is not a list"));
      } else {
        for (int i = 0; i < excludes.size(); i++) {
          String e = excludes.get(i).asText("");
          try {
            exclude.add(sloppyCidr(e).toString());
          } catch (IllegalArgumentException bad) {
            problems.add(
                new BadInput(
                    object,
                    path + ".exclude[" + i + "]",
                    "'" + e + "' is not a CIDR: " + bad.getMessage()));
          }
        }
      }
    }
    Cidr cidr = null;
    int dash = text.indexOf('-');
    try {
      if (text.isEmpty()) {
        throw new IllegalArgumentException("is empty");
      } else if (dash > 0) {
        // whereabouts' "first-last/prefix": the range of the CIDR of last, from first to last
        IpAddress first = IpAddress.parse(text.substring(0, dash).trim());
        String rest = text.substring(dash + 1).trim();
        int slash = rest.indexOf('/');
        if (slash < 0) {
          throw new IllegalArgumentException("a range first-last needs a prefix: first-last/len");
        }
        IpAddress last = IpAddress.parse(rest.substring(0, slash));
        cidr = Cidr.enclosing(last, Integer.parseInt(rest.substring(slash + 1)));
        if (!cidr.contains(first)) {
          throw new IllegalArgumentException(first + " is not inside " + cidr);
        }
        start = first;
        end = last;
      } else {
        cidr = sloppyCidr(text);
      }
    } catch (RuntimeException bad) {
      problems.add(
          new BadInput(
              object,
              path + ".range",
              "'"
                  + text
                  + "' is neither a CIDR nor first-last/prefix: "
                  + firstLine(bad.getMessage())));
    }
    if (cidr != null) {
      for (var bound : new Object[][] {{"range_start", start}, {"range_end", end}}) {
        IpAddress ip = (IpAddress) bound[1];
        if (ip != null && !cidr.contains(ip)) {
          problems.add(new BadInput(object, path + "." + bound[0], ip + " is not inside " + cidr));
        }
      }
    }
    if (problems.size() > before) {
      return Optional.empty();
    }
    if (start != null && start.equals(cidr.network())) {
      start = null;
    }
    return Optional.of(
        new WhereaboutsRange(
            cidr, start, end, List.copyOf(exclude), gateway.isEmpty() ? null : gateway));
  }

  /** A CIDR as Go's ParseCIDR reads it: host bits are dropped. */
  static Cidr sloppyCidr(String text) {
    int slash = text.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("no prefix length");
    }
    int length;
    try {
      length = Integer.parseInt(text.substring(slash + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad prefix length '" + text.substring(slash + 1) + "'");
    }
    return Cidr.enclosing(IpAddress.parse(text.substring(0, slash)), length);
  }

  private static IpAddress address(
      JsonNode node, String field, String object, String path, List<BadInput> problems) {
    String text = text(node, field, object, path, problems);
    if (text.isEmpty()) {
      return null;
    }
    try {
      return IpAddress.parse(text.trim());
    } catch (RuntimeException bad) {
      problems.add(
          new BadInput(
              object,
              path + "." + field,
              "'" + text + "' is not an IP address: " + firstLine(bad.getMessage())));
      return null;
    }
  }

  private static String text(
      JsonNode node, String field, String object, String path, List<BadInput> problems) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return "";
    }
    if (!value.isTextual()) {
      problems.add(new BadInput(object, path + "." + field, "is not a string"));
      return "";
    }
    return value.asText();
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }
}
