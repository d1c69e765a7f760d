package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kipam.cni.spec.CniErrorCode;
import io.kipam.cni.spec.CniException;
import io.kipam.cni.spec.CniRequest;
import io.kipam.cni.spec.CniVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The executable keeps its own copies of the supported versions, the configuration size limit and
 * the rules for {@code ipam.socket}, since it may not depend on the daemon's classes; this test
 * keeps the copies equal.
 */
class ShimAgreesWithSpecTest {

  private static final Map<String, String> ADD =
      Map.of(
          "CNI_COMMAND", "ADD",
          "CNI_CONTAINERID", "c1",
          "CNI_NETNS", "/var/run/netns/cni-1",
          "CNI_IFNAME", "eth0",
          "CNI_PATH", "/opt/cni/bin",
          "CNI_ARGS", "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0");

  @Test
  void supportedVersionsAndSizeLimitMatchTheDaemons() {
    assertThat(Kipam.SUPPORTED_VERSIONS).isEqualTo(CniVersion.supportedTexts());
    assertThat(Kipam.NEWEST_VERSION).isEqualTo(CniVersion.newest().text());
    assertThat(Kipam.STDIN_LIMIT).isEqualTo(CniRequest.MAX_CONFIG_BYTES);
  }

  static Stream<String> badSockets() {
    return Stream.of(
        "\"run/kipam.sock\"",
        "\"\"",
        "\"/run/k\\u0000.sock\"",
        "\"/" + "s".repeat(SocketPath.MAX_BYTES) + "\"",
        "\"/" + "\\u00e9".repeat(SocketPath.MAX_BYTES / 2 + 1) + "\"",
        "5",
        "true",
        "[\"/run/kipam/kipam.sock\"]",
        "{}");
  }

  @ParameterizedTest
  @MethodSource("badSockets")
  void socketProblemsAreDescribedAsTheDaemonDescribesThem(String socket) {
    String config =
        "{\"cniVersion\":\"1.1.0\",\"name\":\"net\",\"type\":\"bridge\","
            + "\"ipam\":{\"type\":\"kipam\",\"pools\":[\"pods-v4\"],\"socket\":"
            + socket
            + "}}";

    CniException daemon =
        catchThrowableOfType(
            () -> CniRequest.parse(ADD, config.getBytes(StandardCharsets.UTF_8)),
            CniException.class);
    IllegalArgumentException shim =
        catchThrowableOfType(
            () -> SocketPath.resolve(MiniJson.parseObject(config), Path.of("/default.sock")),
            IllegalArgumentException.class);

    assertThat(daemon).isNotNull();
    assertThat(daemon.code()).isEqualTo(CniErrorCode.INVALID_NETWORK_CONFIG);
    assertThat(shim).isNotNull();
    assertThat(shim.getMessage()).isEqualTo(daemon.details());
  }
}
