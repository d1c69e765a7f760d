package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class CniEnvironmentTest {

  private static Map<String, String> with(String command, String... changes) {
    Map<String, String> env = Calls.env(command);
    for (int i = 0; i < changes.length; i += 2) {
      if (changes[i + 1] == null) {
        env.remove(changes[i]);
      } else {
        env.put(changes[i], changes[i + 1]);
      }
    }
    return env;
  }

  private static CniException refused(Map<String, String> env) {
    return catchThrowableOfType(CniException.class, () -> CniEnvironment.parse(env));
  }

  static Stream<Arguments> badEnvironments() {
    return Stream.of(
        Arguments.of("no CNI_COMMAND", with("ADD", "CNI_COMMAND", null), "CNI_COMMAND"),
        Arguments.of("empty CNI_COMMAND", with("ADD", "CNI_COMMAND", ""), "CNI_COMMAND"),
        Arguments.of("lower-case command", with("add"), "CNI_COMMAND"),
        Arguments.of(
            "ADD without container ID", with("ADD", "CNI_CONTAINERID", null), "CNI_CONTAINERID"),
        Arguments.of(
            "container ID starting with '-'",
            with("ADD", "CNI_CONTAINERID", "-abc"),
            "CNI_CONTAINERID"),
        Arguments.of(
            "container ID with '/'", with("DEL", "CNI_CONTAINERID", "abc/def"), "CNI_CONTAINERID"),
        Arguments.of("ADD without netns", with("ADD", "CNI_NETNS", null), "CNI_NETNS"),
        Arguments.of("CHECK without netns", with("CHECK", "CNI_NETNS", ""), "CNI_NETNS"),
        Arguments.of("DEL without ifname", with("DEL", "CNI_IFNAME", null), "CNI_IFNAME"),
        Arguments.of(
            "ifname of 16 characters", with("ADD", "CNI_IFNAME", "eth0123456789012"), "CNI_IFNAME"),
        Arguments.of("ifname '.'", with("ADD", "CNI_IFNAME", "."), "CNI_IFNAME"),
        Arguments.of("ifname '..'", with("ADD", "CNI_IFNAME", ".."), "CNI_IFNAME"),
        Arguments.of("ifname with '/'", with("ADD", "CNI_IFNAME", "eth/0"), "CNI_IFNAME"),
        Arguments.of("ifname with ':'", with("ADD", "CNI_IFNAME", "eth0:1"), "CNI_IFNAME"),
        Arguments.of("ifname with a space", with("ADD", "CNI_IFNAME", "eth 0"), "CNI_IFNAME"),
        Arguments.of("ifname with a tab", with("ADD", "CNI_IFNAME", "eth\t0"), "CNI_IFNAME"),
        Arguments.of("GC without CNI_PATH", with("GC", "CNI_PATH", null), "CNI_PATH"),
        Arguments.of(
            "CNI_ARGS pair without '='",
            with("ADD", "CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;oops"),
            "CNI_ARGS"),
        Arguments.of(
            "CNI_ARGS with an empty key",
            with("ADD", "CNI_ARGS", "=x;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b"),
            "CNI_ARGS"),
        Arguments.of(
            "CNI_ARGS key twice with two values",
            with("ADD", "CNI_ARGS", "K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;K8S_POD_NAME=c"),
            "CNI_ARGS"),
        Arguments.of(
            "unknown CNI_ARGS key without IgnoreUnknown",
            with("ADD", "CNI_ARGS", "K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;GATEWAY=10.0.0.1"),
            "CNI_ARGS"),
        Arguments.of(
            "IgnoreUnknown neither true nor false",
            with("ADD", "CNI_ARGS", "IgnoreUnknown=yes;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b"),
            "CNI_ARGS"),
        Arguments.of(
            "ADD without the pod's namespace",
            with("ADD", "CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAME=b"),
            "CNI_ARGS"),
        Arguments.of("ADD without CNI_ARGS at all", with("ADD", "CNI_ARGS", null), "CNI_ARGS"),
        Arguments.of(
            "malformed MAC in CNI_ARGS",
            with("ADD", "CNI_ARGS", "K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;MAC=0a:58:zz:00:00:01"),
            "CNI_ARGS"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badEnvironments")
  void refusesAMissingOrMalformedVariableWithCode4NamingIt(
      String description, Map<String, String> env, String variable) {
    CniException e = refused(env);
    assertThat(e.code().code()).isEqualTo(4);
    assertThat(e.msg()).isEqualTo("invalid CNI environment variables: " + variable);
    assertThat(e.details()).contains(variable);
  }

  @Test
  void reportsEveryMissingVariableInOneError() {
    Map<String, String> env = new HashMap<>();
    env.put("CNI_COMMAND", "ADD");
    CniException e = refused(env);
    assertThat(e.code().code()).isEqualTo(4);
    assertThat(e.msg())
        .isEqualTo(
            "invalid CNI environment variables: CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS, CNI_ARGS");
    assertThat(e.details())
        .isEqualTo(
            "CNI_CONTAINERID is not set; the runtime must set it for ADD. "
                + "CNI_IFNAME is not set; the runtime must set it for ADD. "
                + "CNI_NETNS is not set; the runtime must set it for ADD. "
                + "CNI_ARGS has no K8S_POD_NAMESPACE and no K8S_POD_NAME; kipam allocates for"
                + " Kubernetes pods and needs the pod's namespace and name");
  }

  @Test
  void reportsMalformedAndMissingVariablesTogether() {
    CniException e =
        refused(with("CHECK", "CNI_IFNAME", "a-very-long-interface", "CNI_NETNS", null));
    assertThat(e.msg()).isEqualTo("invalid CNI environment variables: CNI_IFNAME, CNI_NETNS");
    assertThat(e.details())
        .contains("CNI_IFNAME 'a-very-long-interface' is 21 bytes long")
        .contains("CNI_NETNS is not set");
  }

  @Test
  void anUnknownCommandStillReportsTheOtherBrokenVariables() {
    CniException e = refused(with("ATTACH", "CNI_IFNAME", "eth:0"));
    assertThat(e.msg()).isEqualTo("invalid CNI environment variables: CNI_COMMAND, CNI_IFNAME");
  }

  @Test
  void delNeedsNoNetworkNamespace() {
    CniEnvironment env = CniEnvironment.parse(with("DEL", "CNI_NETNS", null));
    assertThat(env.netns()).isEmpty();
    assertThat(env.attachment()).contains(new Attachment(Calls.CONTAINER_ID, "eth0"));
  }

  @Test
  void delNeedsNoPodIdentity() {
    CniEnvironment env = CniEnvironment.parse(with("DEL", "CNI_ARGS", null));
    assertThat(env.args().podName()).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(
      value = CniCommand.class,
      names = {"STATUS", "VERSION"})
  void statusAndVersionNeedOnlyTheCommand(CniCommand command) {
    CniEnvironment env = CniEnvironment.parse(Map.of("CNI_COMMAND", command.name()));
    assertThat(env.command()).isEqualTo(command);
    assertThat(env.attachment()).isEmpty();
  }

  @Test
  void gcNeedsCniPathButNoContainerVariables() {
    CniEnvironment env =
        CniEnvironment.parse(Map.of("CNI_COMMAND", "GC", "CNI_PATH", "/opt/cni/bin"));
    assertThat(env.path()).containsExactly("/opt/cni/bin");
    assertThat(env.attachment()).isEmpty();
  }

  @Test
  void gcIgnoresContainerVariablesItDoesNotUse() {
    CniEnvironment env =
        CniEnvironment.parse(
            Map.of("CNI_COMMAND", "GC", "CNI_PATH", "/opt/cni/bin", "CNI_IFNAME", "not/an/ifname"));
    assertThat(env.ifName()).isEmpty();
    assertThat(env.attachment()).isEmpty();
  }

  @Test
  void splitsCniPathOnTheListSeparatorAndDropsEmptyEntries() {
    CniEnvironment env =
        CniEnvironment.parse(with("ADD", "CNI_PATH", "/opt/cni/bin::/usr/lib/cni:"));
    assertThat(env.path()).containsExactly("/opt/cni/bin", "/usr/lib/cni");
  }

  @Test
  void readsThePodIdentityFromCniArgs() {
    CniArgs args = CniEnvironment.parse(Calls.env("ADD")).args();
    assertThat(args.podNamespace()).contains("default");
    assertThat(args.podName()).contains("web-0");
    assertThat(args.podUid()).contains("0b6a5c1e-3f0d-4c39-9d5b-4b1c2f0e9a11");
    assertThat(args.podInfraContainerId()).contains(Calls.CONTAINER_ID);
    assertThat(args.ignoreUnknown()).isTrue();
  }

  /**
   * Multus (v4.2.3) builds its delegates' CNI_ARGS from the pod's identity and then appends every
   * pair of the runtime's CNI_ARGS, which carries the same identity: each key comes twice, with one
   * value ({@code IgnoreUnknown} as {@code true}, then as the runtime's {@code 1}). That is one
   * setting, said twice.
   */
  @Test
  void acceptsAKeyRepeatedWithTheSameValueAsMultusPassesIt() {
    String runtime =
        "IgnoreUnknown=1;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;K8S_POD_INFRA_CONTAINER_ID=c"
            + ";K8S_POD_UID=0b6a5c1e-3f0d-4c39-9d5b-4b1c2f0e9a11";
    String multus =
        "IgnoreUnknown=true;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;K8S_POD_INFRA_CONTAINER_ID=c"
            + ";K8S_POD_UID=0b6a5c1e-3f0d-4c39-9d5b-4b1c2f0e9a11;"
            + runtime;
    CniArgs args = CniEnvironment.parse(with("ADD", "CNI_ARGS", multus)).args();
    assertThat(args.podNamespace()).contains("a");
    assertThat(args.podName()).contains("b");
    assertThat(args.podUid()).contains("0b6a5c1e-3f0d-4c39-9d5b-4b1c2f0e9a11");
    assertThat(args.podInfraContainerId()).contains("c");
    assertThat(args.ignoreUnknown()).isTrue();
  }

  @Test
  void ignoreUnknownSetOnceOnAndOnceOffIsRefused() {
    CniException e =
        refused(
            with(
                "ADD",
                "CNI_ARGS",
                "IgnoreUnknown=true;K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;IgnoreUnknown=0"));
    assertThat(e.details()).contains("'IgnoreUnknown'").contains("two values");
  }

  @Test
  void aKeyRepeatedWithAnotherValueIsNamedButItsValuesAreNot() {
    CniException e =
        refused(
            with("ADD", "CNI_ARGS", "K8S_POD_NAMESPACE=a;K8S_POD_NAME=web-0;K8S_POD_NAME=web-1"));
    assertThat(e.code().code()).isEqualTo(4);
    assertThat(e.details())
        .contains("'K8S_POD_NAME'")
        .contains("two values")
        .doesNotContain("web-0")
        .doesNotContain("web-1");
  }

  @Test
  void keepsUnknownCniArgsWhenIgnoreUnknownIsSet() {
    CniArgs args =
        CniEnvironment.parse(
                with(
                    "ADD",
                    "CNI_ARGS",
                    "K8S_POD_NAMESPACE=a;FOO=bar=baz;K8S_POD_NAME=b;IgnoreUnknown=true;"))
            .args();
    assertThat(args.unknown()).containsExactly(Map.entry("FOO", "bar=baz"));
    assertThat(args.pairs()).containsKeys("K8S_POD_NAMESPACE", "K8S_POD_NAME", "IgnoreUnknown");
  }

  @Test
  void unknownCniArgsAreNamedButTheirValuesAreNot() {
    CniException e =
        refused(with("ADD", "CNI_ARGS", "K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;TOKEN=hunter2"));
    assertThat(e.details())
        .contains("'TOKEN'")
        .contains("IgnoreUnknown=1")
        .doesNotContain("hunter2");
  }

  @Test
  void acceptsTheLongestValidInterfaceNameAndAnyValidContainerId() {
    CniEnvironment env =
        CniEnvironment.parse(
            with("ADD", "CNI_IFNAME", "net1-abcdefghij", "CNI_CONTAINERID", "k8s_POD.web-0_1"));
    assertThat(env.ifName()).contains("net1-abcdefghij");
    assertThat(env.containerId()).contains("k8s_POD.web-0_1");
  }
}
