package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.IpFamily;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads a result of any supported CNI version (a {@code prevResult}) into {@link IpamResult},
 * reporting each invalid field by its JSON path. Reading is lenient where other plugins may differ
 * from kipam without being wrong: any standard address spelling, a missing per-IP {@code version},
 * and fields kipam does not use ({@code interfaces}, interface indexes, 1.1 route attributes).
 */
final class ResultReader {

  private ResultReader() {}

  /** Reads a result of any supported version found at {@code path}, reporting into problems. */
  static IpamResult parse(JsonNode node, String path, JsonProblems problems) {
    String at = path.isEmpty() ? "the result" : path;
    if (!node.isObject()) {
      problems.add(at, "must be an object, not " + JsonProblems.typeOf(node));
      return new IpamResult(List.of(), List.of(), Dns.NONE);
    }
    problems
        .string(node, path, "cniVersion", false)
        .filter(v -> CniVersion.find(v).isEmpty())
        .ifPresent(
            v ->
                problems.add(
                    JsonProblems.path(path, "cniVersion"),
                    Json.quote(v)
                        + " is not a supported version; kipam supports "
                        + String.join(", ", CniVersion.supportedTexts())));
    List<IpConfig> ips = new ArrayList<>();
    List<JsonNode> ipNodes = problems.array(node, path, "ips", false).orElse(List.of());
    for (int i = 0; i < ipNodes.size(); i++) {
      ip(ipNodes.get(i), JsonProblems.index(JsonProblems.path(path, "ips"), i), problems)
          .ifPresent(ips::add);
    }
    List<Route> routes = new ArrayList<>();
    List<JsonNode> routeNodes = problems.array(node, path, "routes", false).orElse(List.of());
    for (int i = 0; i < routeNodes.size(); i++) {
      route(routeNodes.get(i), JsonProblems.index(JsonProblems.path(path, "routes"), i), problems)
          .ifPresent(routes::add);
    }
    Dns dns =
        problems
            .object(node, path, "dns", false)
            .map(d -> dns(d, JsonProblems.path(path, "dns"), problems))
            .orElse(Dns.NONE);
    return new IpamResult(ips, routes, dns);
  }

  private static Optional<IpConfig> ip(JsonNode node, String path, JsonProblems problems) {
    if (!node.isObject()) {
      problems.add(path, "must be an object, not " + JsonProblems.typeOf(node));
      return Optional.empty();
    }
    Optional<String> text = problems.string(node, path, "address", true);
    Optional<String> version = problems.string(node, path, "version", false);
    Optional<IpAddress> gateway =
        problems
            .string(node, path, "gateway", false)
            .flatMap(gw -> address(gw, JsonProblems.path(path, "gateway"), problems));
    if (text.isEmpty()) {
      return Optional.empty();
    }
    String addressPath = JsonProblems.path(path, "address");
    int slash = text.get().indexOf('/');
    if (slash < 0) {
      problems.add(
          addressPath,
          Json.quote(text.get()) + " has no prefix length; write it as CIDR, e.g. 10.0.0.5/24");
      return Optional.empty();
    }
    Optional<IpAddress> address = address(text.get().substring(0, slash), addressPath, problems);
    if (address.isEmpty()) {
      return Optional.empty();
    }
    IpFamily family = address.get().family();
    Optional<Integer> prefix = prefixLength(text.get(), slash, family, addressPath, problems);
    if (prefix.isEmpty()) {
      return Optional.empty();
    }
    String expected = family == IpFamily.V4 ? "4" : "6";
    if (version.isPresent() && !version.get().equals(expected)) {
      problems.add(
          JsonProblems.path(path, "version"),
          Json.quote(version.get()) + " does not match the " + family.displayName() + " address");
      return Optional.empty();
    }
    if (gateway.isPresent() && gateway.get().family() != family) {
      problems.add(
          JsonProblems.path(path, "gateway"),
          "is not of the same family as the address " + address.get());
      return Optional.empty();
    }
    return Optional.of(new IpConfig(address.get(), prefix.get(), gateway));
  }

  private static Optional<Route> route(JsonNode node, String path, JsonProblems problems) {
    if (!node.isObject()) {
      problems.add(path, "must be an object, not " + JsonProblems.typeOf(node));
      return Optional.empty();
    }
    Optional<Cidr> dst =
        problems
            .string(node, path, "dst", true)
            .flatMap(d -> cidr(d, JsonProblems.path(path, "dst"), problems));
    Optional<IpAddress> gw =
        problems
            .string(node, path, "gw", false)
            .flatMap(g -> address(g, JsonProblems.path(path, "gw"), problems));
    if (dst.isEmpty()) {
      return Optional.empty();
    }
    if (gw.isPresent() && gw.get().family() != dst.get().family()) {
      problems.add(JsonProblems.path(path, "gw"), "is not of the same family as dst " + dst.get());
      return Optional.empty();
    }
    return Optional.of(new Route(dst.get(), gw));
  }

  private static Dns dns(JsonNode node, String path, JsonProblems problems) {
    List<IpAddress> servers = new ArrayList<>();
    List<String> texts = problems.strings(node, path, "nameservers");
    for (int i = 0; i < texts.size(); i++) {
      address(texts.get(i), JsonProblems.index(JsonProblems.path(path, "nameservers"), i), problems)
          .ifPresent(servers::add);
    }
    return new Dns(
        servers,
        problems.string(node, path, "domain", false),
        problems.strings(node, path, "search"),
        problems.strings(node, path, "options"));
  }

  /** Any standard spelling of an address: results from other plugins need not be canonical. */
  static Optional<IpAddress> address(String text, String path, JsonProblems problems) {
    try {
      return Optional.of(IpAddress.parseLenient(text));
    } catch (IllegalArgumentException e) {
      problems.add(path, "is not an IP address: " + e.getMessage());
      return Optional.empty();
    }
  }

  static Optional<Cidr> cidr(String text, String path, JsonProblems problems) {
    int slash = text.indexOf('/');
    if (slash < 0) {
      problems.add(path, Json.quote(text) + " has no prefix length; write it as CIDR");
      return Optional.empty();
    }
    Optional<IpAddress> network = address(text.substring(0, slash), path, problems);
    if (network.isEmpty()) {
      return Optional.empty();
    }
    Optional<Integer> prefix = prefixLength(text, slash, network.get().family(), path, problems);
    if (prefix.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Cidr.of(network.get(), prefix.get()));
    } catch (IllegalArgumentException e) {
      problems.add(path, "is not a network: " + e.getMessage());
      return Optional.empty();
    }
  }

  private static Optional<Integer> prefixLength(
      String text, int slash, IpFamily family, String path, JsonProblems problems) {
    String digits = text.substring(slash + 1);
    if (digits.isEmpty()
        || digits.length() > 3
        || !digits.chars().allMatch(c -> c >= '0' && c <= '9')
        || Integer.parseInt(digits) > family.bits()) {
      problems.add(
          path,
          Json.quote(text)
              + " has an invalid prefix length; an "
              + family.displayName()
              + " prefix length is 0 to "
              + family.bits());
      return Optional.empty();
    }
    return Optional.of(Integer.parseInt(digits));
  }
}
