package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Environments and configurations as a Kubernetes runtime sends them, for the tests to vary, and
 * the check of a failed answer.
 */
final class Calls {

  static final String CONTAINER_ID =
      "3f6940ab5ab43bc522569d15b23f8c1bbde1d7678b080398506924fc01d72755";

  private Calls() {}

  /** Every variable a runtime sets for a pod attachment, with {@code command}. */
  static Map<String, String> env(String command) {
    Map<String, String> env = new HashMap<>();
    env.put("CNI_COMMAND", command);
    env.put("CNI_CONTAINERID", CONTAINER_ID);
    env.put("CNI_NETNS", "/var/run/netns/cni-1234");
    env.put("CNI_IFNAME", "eth0");
    env.put(
        "CNI_ARGS",
        "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;"
            + "K8S_POD_INFRA_CONTAINER_ID="
            + CONTAINER_ID
            + ";K8S_POD_UID=0b6a5c1e-3f0d-4c39-9d5b-4b1c2f0e9a11");
    env.put("CNI_PATH", "/opt/cni/bin:/usr/libexec/cni");
    return env;
  }

  static Map<String, String> env(CniCommand command) {
    return env(command.name());
  }

  /** A configuration as the bridge plugin passes it on, with {@code extra} top-level members. */
  static String config(String version, String extra) {
    return "{\"cniVersion\":\""
        + version
        + "\",\"name\":\"k8s-pod-network\",\"type\":\"bridge\",\"bridge\":\"cni0\","
        + "\"isGateway\":true,\"ipam\":{\"type\":\"kipam\",\"pools\":[\"default-v4\"]}"
        + (extra.isEmpty() ? "" : "," + extra)
        + "}";
  }

  /** A configuration that every command accepts: with a prevResult and valid attachments. */
  static String fullConfig(String version) {
    return config(
        version,
        "\"prevResult\":{\"cniVersion\":\""
            + version
            + "\",\"ips\":[{\"address\":\"10.0.0.5/24\"}]},"
            + "\"cni.dev/valid-attachments\":[{\"containerID\":\""
            + CONTAINER_ID
            + "\",\"ifname\":\"eth0\"}]");
  }

  /** A configuration with {@code ipam} as its ipam section. */
  static String withIpam(String ipam) {
    return "{\"cniVersion\":\"1.1.0\",\"name\":\"net\",\"type\":\"bridge\",\"ipam\":" + ipam + "}";
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static CniRequest parse(Map<String, String> env, String stdin) {
    return CniRequest.parse(env, bytes(stdin));
  }

  /** Asserts that {@code response} is a failure: exit code 1 and exactly {@code stdout}. */
  static void assertFailure(CniResponse response, String stdout) {
    assertThat(response.exitCode()).isEqualTo(1);
    assertThat(response.stdoutText()).isEqualTo(stdout);
  }
}
