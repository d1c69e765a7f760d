package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The CNI specification versions kipam speaks, oldest first. A configuration's {@code cniVersion}
 * decides the shape of kipam's answer and which commands the caller may use: CHECK exists from
 * 0.4.0, GC and STATUS from 1.1.0. Versions before 0.3.0 are not supported because their result
 * shape ({@code ip4}/{@code ip6}) predates dual-stack lists; 1.0.0 dropped the per-IP {@code
 * version} field.
 */
public enum CniVersion {
  V0_3_0("0.3.0"),
  V0_3_1("0.3.1"),
  V0_4_0("0.4.0"),
  V1_0_0("1.0.0"),
  V1_1_0("1.1.0");

  private static final List<String> SUPPORTED =
      Arrays.stream(values()).map(CniVersion::text).toList();

  private final String text;

  CniVersion(String text) {
    this.text = text;
  }

  /** The newest version, used to answer when the caller's version is unknown or unsupported. */
  public static CniVersion newest() {
    return V1_1_0;
  }

  /** The supported versions as the spec writes them, oldest first. */
  public static List<String> supportedTexts() {
    return SUPPORTED;
  }

  /** The version spelled exactly {@code text}, if kipam supports it. */
  public static Optional<CniVersion> find(String text) {
    for (CniVersion version : values()) {
      if (version.text.equals(text)) {
        return Optional.of(version);
      }
    }
    return Optional.empty();
  }

  /**
   * The version spelled exactly {@code text}.
   *
   * @throws CniException code 1, naming the supported versions, if kipam does not speak it
   */
  public static CniVersion parse(String text) {
    return find(text)
        .orElseThrow(
            () ->
                new CniException(
                    CniErrorCode.INCOMPATIBLE_VERSION,
                    "incompatible CNI version",
                    (text == null
                            ? "the network configuration has no cniVersion"
                            : "cniVersion " + Json.quote(text) + " is not supported")
                        + "; kipam supports "
                        + String.join(", ", SUPPORTED)));
  }

  /** The version as the spec writes it, e.g. "0.4.0". */
  public String text() {
    return text;
  }

  /** True if a caller speaking this version may send {@code command}. */
  public boolean allows(CniCommand command) {
    return compareTo(command.since()) >= 0;
  }

  /**
   * @throws CniException code 1 if this version does not have {@code command}
   */
  public void requireAllows(CniCommand command) {
    if (!allows(command)) {
      throw new CniException(
          CniErrorCode.INCOMPATIBLE_VERSION,
          "CNI version " + text + " does not allow " + command,
          command
              + " exists from cniVersion "
              + command.since().text
              + "; set the network configuration's cniVersion to "
              + command.since().text
              + " or later");
    }
  }

  /** True if results of this version carry {@code "version": "4"|"6"} in each IP (before 1.0). */
  public boolean ipsCarryVersion() {
    return compareTo(V1_0_0) < 0;
  }

  /**
   * The answer to VERSION: {@code {"cniVersion": this, "supportedVersions": [...]}}, compact JSON.
   */
  public String versionAnswerJson() {
    ObjectNode answer = Json.MAPPER.createObjectNode();
    answer.put("cniVersion", text);
    ArrayNode versions = answer.putArray("supportedVersions");
    SUPPORTED.forEach(versions::add);
    return Json.write(answer);
  }

  @Override
  public String toString() {
    return text;
  }
}
