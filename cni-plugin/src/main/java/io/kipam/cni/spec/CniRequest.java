package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One CNI call, read from the runtime's environment variables and stdin bytes and validated: the
 * single loader for everything kipam takes from a runtime. {@link #parse} checks, in order, the
 * environment (code 4, every problem at once), the size of stdin (at most {@link
 * #MAX_CONFIG_BYTES}), its JSON syntax (code 6, by position), the {@code cniVersion} and whether it
 * has the command (code 1), and the configuration (code 7 by JSON path, or 2). Each error is
 * answered in the caller's cniVersion once that is known.
 *
 * <p>VERSION needs nothing but CNI_COMMAND; its {@link #cniVersion()} is the caller's version when
 * kipam supports it and the newest otherwise, and it has no {@link #config()}.
 */
public record CniRequest(
    CniVersion cniVersion, CniEnvironment environment, Optional<NetworkConfig> config) {

  /** Network configurations are small; anything larger is refused before it is parsed. */
  public static final int MAX_CONFIG_BYTES = 1 << 20;

  private static final String STDIN = "the network configuration";

  public CniRequest {
    Objects.requireNonNull(cniVersion, "cniVersion");
    Objects.requireNonNull(environment, "environment");
    Objects.requireNonNull(config, "config");
  }

  public CniCommand command() {
    return environment.command();
  }

  /** The attachment of ADD, DEL and CHECK. */
  public Optional<Attachment> attachment() {
    return environment.attachment();
  }

  /**
   * Reads and validates one call.
   *
   * @param env the process environment of the call (only CNI_* variables are read)
   * @param stdin the bytes the runtime wrote to stdin, possibly more than the limit
   * @throws CniException with the CNI error code for the first failing stage, see the class
   */
  public static CniRequest parse(Map<String, String> env, byte[] stdin) {
    Objects.requireNonNull(stdin, "stdin");
    CniEnvironment environment;
    try {
      environment = CniEnvironment.parse(env);
    } catch (CniException e) {
      throw e.answeredIn(sniffVersion(stdin).orElse(null));
    }
    if (environment.command() == CniCommand.VERSION) {
      return new CniRequest(
          sniffVersion(stdin).orElse(CniVersion.newest()), environment, Optional.empty());
    }
    if (stdin.length > MAX_CONFIG_BYTES) {
      throw new CniException(
          CniErrorCode.INVALID_NETWORK_CONFIG,
          "network configuration too large",
          STDIN
              + " is more than "
              + MAX_CONFIG_BYTES
              + " bytes (1 MiB), the most kipam reads; it was not parsed");
    }
    JsonNode root = Json.read(stdin, STDIN);
    if (!root.isObject()) {
      throw new CniException(
          CniErrorCode.INVALID_NETWORK_CONFIG,
          "invalid network configuration",
          STDIN + " must be a JSON object, not " + JsonProblems.typeOf(root));
    }
    CniVersion version = version(root);
    try {
      version.requireAllows(environment.command());
      NetworkConfig config =
          NetworkConfig.parse(root, version, environment.command(), environment.args());
      return new CniRequest(version, environment, Optional.of(config));
    } catch (CniException e) {
      throw e.answeredIn(version);
    }
  }

  private static CniVersion version(JsonNode root) {
    Optional<JsonNode> node = JsonProblems.member(root, "cniVersion");
    if (node.isPresent() && !node.get().isTextual()) {
      throw new CniException(
          CniErrorCode.INVALID_NETWORK_CONFIG,
          "invalid network configuration",
          "cniVersion must be a string such as \"1.1.0\", not " + JsonProblems.typeOf(node.get()));
    }
    return CniVersion.parse(node.map(JsonNode::textValue).orElse(null));
  }

  /**
   * The caller's version if stdin is a readable configuration naming a supported one. Used only to
   * choose the version of an answer, so every failure simply means "unknown".
   */
  static Optional<CniVersion> sniffVersion(byte[] stdin) {
    if (stdin.length == 0 || stdin.length > MAX_CONFIG_BYTES) {
      return Optional.empty();
    }
    try {
      JsonNode version = Json.MAPPER.readTree(stdin).get("cniVersion");
      return version != null && version.isTextual()
          ? CniVersion.find(version.textValue())
          : Optional.empty();
    } catch (java.io.IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
