package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The parts of a network configuration (stdin) that kipam reads, validated for one command: the
 * caller's {@code cniVersion} (kept so the answer is in the same version), the network {@code
 * name}, the calling plugin's {@code type}, the {@link IpamConfig}, the MAC the runtime asked for
 * ({@code runtimeConfig.mac}, the "mac" capability, or CNI_ARGS MAC), the {@code prevResult} of
 * CHECK and DEL, GC's {@code cni.dev/valid-attachments}, and {@code allowPersistentIPs} (the
 * multi-network convention by which a network lets pods keep addresses through an IPAMClaim; false
 * when absent). Everything else, including the main plugin's own settings and {@code args}, is
 * ignored as the specification allows.
 */
public record NetworkConfig(
    CniVersion cniVersion,
    String name,
    String type,
    IpamConfig ipam,
    Optional<String> mac,
    Optional<IpamResult> prevResult,
    Optional<List<Attachment>> validAttachments,
    boolean allowPersistentIPs,
    List<IpAddressRequest> ips) {

  /**
   * An address asked for in {@code runtimeConfig.ips} (the CNI {@code ips} capability, which Multus
   * fills from the network-selection element's {@code "ips"}): the address, and the path it was
   * read from (for messages).
   */
  public record IpAddressRequest(io.kipam.api.net.IpAddress ip, String path) {}

  /** The top-level key by which a network lets its pods name an IPAMClaim. */
  public static final String ALLOW_PERSISTENT_IPS = "allowPersistentIPs";

  /** GC's list of attachments that are still in use (CNI 1.1). */
  public static final String VALID_ATTACHMENTS = "cni.dev/valid-attachments";

  /**
   * The key an early draft of CNI 1.1 used; libcni sends it alongside {@link #VALID_ATTACHMENTS},
   * so it is read only when the current key is absent.
   */
  static final String LEGACY_ATTACHMENTS = "cni.dev/attachments";

  public NetworkConfig {
    Objects.requireNonNull(cniVersion, "cniVersion");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(ipam, "ipam");
    Objects.requireNonNull(mac, "mac");
    Objects.requireNonNull(prevResult, "prevResult");
    validAttachments = validAttachments.map(List::copyOf);
    ips = List.copyOf(ips);
  }

  /**
   * Reads the configuration {@code root} for {@code command}.
   *
   * @throws CniException code 7 naming the JSON path of every invalid field, or code 2 if the only
   *     problem is an unsupported field in {@code ipam}
   */
  static NetworkConfig parse(JsonNode root, CniVersion version, CniCommand command, CniArgs args) {
    JsonProblems problems = new JsonProblems();
    Optional<String> name = problems.string(root, "", "name", true);
    name.flatMap(Identifiers::networkNameProblem).ifPresent(p -> problems.add("name", p));
    Optional<String> type = problems.string(root, "", "type", true);
    type.filter(String::isEmpty).ifPresent(t -> problems.add("type", "is empty"));
    Optional<IpamConfig> ipam =
        problems
            .object(root, "", "ipam", true)
            .flatMap(node -> IpamConfig.parse(node, "ipam", problems));
    Optional<String> mac = mac(root, args, problems);
    Optional<IpamResult> prevResult = Optional.empty();
    if (command == CniCommand.CHECK || command == CniCommand.DEL) {
      Optional<JsonNode> node = JsonProblems.member(root, "prevResult");
      if (node.isEmpty() && command == CniCommand.CHECK) {
        problems.add(
            "prevResult",
            "is required for CHECK; the runtime must pass the result of the previous ADD");
      }
      prevResult = node.map(n -> ResultReader.parse(n, "prevResult", problems));
    }
    Optional<List<Attachment>> attachments =
        command == CniCommand.GC ? Optional.of(attachments(root, problems)) : Optional.empty();
    boolean persistent = problems.bool(root, "", ALLOW_PERSISTENT_IPS).orElse(false);
    List<IpAddressRequest> ips = ips(root, problems);
    problems.throwIfAny("invalid network configuration");
    return new NetworkConfig(
        version, name.get(), type.get(), ipam.get(), mac, prevResult, attachments, persistent, ips);
  }

  /** {@code runtimeConfig.ips}: addresses, each with or without a prefix length. */
  private static List<IpAddressRequest> ips(JsonNode root, JsonProblems problems) {
    List<IpAddressRequest> ips = new ArrayList<>();
    // Its type was reported with runtimeConfig.mac, if wrong.
    Optional<JsonNode> runtimeConfig =
        JsonProblems.member(root, "runtimeConfig").filter(JsonNode::isObject);
    if (runtimeConfig.isEmpty()) {
      return ips;
    }
    List<String> values = problems.strings(runtimeConfig.get(), "runtimeConfig", "ips");
    for (int i = 0; i < values.size(); i++) {
      String at = JsonProblems.index("runtimeConfig.ips", i);
      String value = values.get(i);
      String address = value.contains("/") ? value.substring(0, value.indexOf('/')) : value;
      try {
        ips.add(new IpAddressRequest(io.kipam.api.net.IpAddress.parse(address), at));
      } catch (IllegalArgumentException e) {
        problems.add(
            at,
            Json.quote(value)
                + " is not an IP address; write one such as 10.244.1.7 or"
                + " 10.244.1.7/24");
      }
    }
    return ips;
  }

  private static Optional<String> mac(JsonNode root, CniArgs args, JsonProblems problems) {
    Optional<String> fromConfig =
        problems
            .object(root, "", "runtimeConfig", false)
            .flatMap(rc -> problems.string(rc, "runtimeConfig", "mac", false));
    Optional<String> normalized = fromConfig.flatMap(MacAddress::normalize);
    if (fromConfig.isPresent() && normalized.isEmpty()) {
      problems.add(
          "runtimeConfig.mac",
          Json.quote(fromConfig.get())
              + " is not a MAC address; write six hex octets such as 0a:58:0a:f4:00:05");
      return Optional.empty();
    }
    // CNI_ARGS MAC was validated with the environment.
    Optional<String> fromArgs = args.get(CniArgs.MAC).flatMap(MacAddress::normalize);
    if (normalized.isPresent() && fromArgs.isPresent() && !normalized.equals(fromArgs)) {
      problems.add(
          "runtimeConfig.mac",
          Json.quote(normalized.get())
              + " differs from CNI_ARGS MAC "
              + Json.quote(fromArgs.get())
              + "; pass one MAC, or the same in both");
      return Optional.empty();
    }
    return normalized.or(() -> fromArgs);
  }

  /**
   * GC's valid attachments. A missing list is an error, not "nothing is valid": reading it as empty
   * would release every address on the node. For the same reason one malformed entry fails the
   * whole call instead of being skipped.
   */
  private static List<Attachment> attachments(JsonNode root, JsonProblems problems) {
    String key =
        JsonProblems.member(root, VALID_ATTACHMENTS).isEmpty()
                && JsonProblems.member(root, LEGACY_ATTACHMENTS).isPresent()
            ? LEGACY_ATTACHMENTS
            : VALID_ATTACHMENTS;
    List<Attachment> attachments = new ArrayList<>();
    Optional<List<JsonNode>> elements = problems.array(root, "", key, true);
    for (int i = 0; i < elements.map(List::size).orElse(0); i++) {
      JsonNode element = elements.get().get(i);
      String at = JsonProblems.index(key, i);
      if (!element.isObject()) {
        problems.add(at, "must be an object, not " + JsonProblems.typeOf(element));
        continue;
      }
      Optional<String> containerId = problems.string(element, at, "containerID", true);
      Optional<String> ifName = problems.string(element, at, "ifname", true);
      containerId
          .flatMap(Identifiers::containerIdProblem)
          .ifPresent(p -> problems.add(JsonProblems.path(at, "containerID"), p));
      ifName
          .flatMap(Identifiers::ifNameProblem)
          .ifPresent(p -> problems.add(JsonProblems.path(at, "ifname"), p));
      if (containerId.isPresent() && ifName.isPresent()) {
        attachments.add(new Attachment(containerId.get(), ifName.get()));
      }
    }
    return attachments;
  }
}
