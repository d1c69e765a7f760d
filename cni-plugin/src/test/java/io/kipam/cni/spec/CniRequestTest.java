package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class CniRequestTest {

  private static CniException refused(String command, String stdin) {
    return catchThrowableOfType(CniException.class, () -> Calls.parse(Calls.env(command), stdin));
  }

  /** The refusal of an ADD whose stdin is these bytes, which need not be text. */
  private static CniException refused(byte[] stdin) {
    return catchThrowableOfType(
        CniException.class, () -> CniRequest.parse(Calls.env("ADD"), stdin));
  }

  @Test
  void readsAnAddRequestAsTheBridgePluginPassesIt() {
    CniRequest request = Calls.parse(Calls.env("ADD"), Calls.config("1.0.0", ""));
    assertThat(request.command()).isEqualTo(CniCommand.ADD);
    assertThat(request.cniVersion()).isEqualTo(CniVersion.V1_0_0);
    assertThat(request.attachment()).contains(new Attachment(Calls.CONTAINER_ID, "eth0"));
    NetworkConfig config = request.config().orElseThrow();
    assertThat(config.name()).isEqualTo("k8s-pod-network");
    assertThat(config.type()).isEqualTo("bridge");
    assertThat(config.ipam().pools()).containsExactly("default-v4");
    assertThat(config.ipam().socket()).isEmpty();
    assertThat(config.mac()).isEmpty();
    assertThat(config.prevResult()).isEmpty();
    assertThat(config.validAttachments()).isEmpty();
  }

  @Test
  void readsTwoPoolsAndTheDaemonSocket() {
    IpamConfig ipam =
        Calls.parse(
                Calls.env("ADD"),
                Calls.withIpam(
                    "{\"type\":\"kipam\",\"pools\":[\"pods-v4\",\"pods-v6\"],"
                        + "\"socket\":\"/run/kipam/kipam.sock\"}"))
            .config()
            .orElseThrow()
            .ipam();
    assertThat(ipam.pools()).containsExactly("pods-v4", "pods-v6");
    assertThat(ipam.socket()).contains("/run/kipam/kipam.sock");
  }

  static Stream<Arguments> invalidIpamSections() {
    return Stream.of(
        Arguments.of("{\"type\":\"host-local\",\"pools\":[\"a\"]}", "ipam.type is 'host-local'"),
        Arguments.of("{\"pools\":[\"a\"]}", "ipam.type is required"),
        Arguments.of("{\"type\":\"kipam\"}", "ipam.pools is required"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":\"a\"}", "ipam.pools must be a list, not a string"),
        Arguments.of("{\"type\":\"kipam\",\"pools\":[]}", "ipam.pools has 0 pools"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}",
            "ipam.pools has 9 pools"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"\"]}", "ipam.pools[0] is empty; name an IPPool"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"a\",\"a\"]}", "ipam.pools[1] names pool 'a' again"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"a\",\"Pods_V6\"]}",
            "ipam.pools[1] is invalid: pool name 'Pods_V6' is not a DNS-1123 label"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"a\",\"" + "p".repeat(64) + "\"]}",
            "has 64 characters; a DNS-1123 label has at most 63"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[7]}",
            "ipam.pools[0] must be a pool name, not a number"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"a\"],\"socket\":\"run/kipam.sock\"}",
            "ipam.socket 'run/kipam.sock' must be an absolute path"),
        Arguments.of(
            "{\"type\":\"kipam\",\"pools\":[\"a\"],\"socket\":\"/" + "s".repeat(107) + "\"}",
            "bytes a unix socket path may have"),
        Arguments.of("[\"kipam\"]", "ipam must be an object, not a list"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("invalidIpamSections")
  void refusesAnInvalidIpamSectionWithCode7NamingThePath(String ipam, String expected) {
    CniException e = refused("ADD", Calls.withIpam(ipam));
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.msg()).isEqualTo("invalid network configuration");
    assertThat(e.details()).contains(expected);
  }

  @Test
  void reportsEveryInvalidFieldInOneError() {
    CniException e =
        refused(
            "ADD",
            "{\"cniVersion\":\"1.1.0\",\"name\":\"-bad\",\"ipam\":{\"type\":\"kipam\","
                + "\"pools\":[\"ok\",\"NOT-OK\"]},\"runtimeConfig\":{\"mac\":\"nope\"}}");
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details())
        .contains("name '-bad' must start with a letter or digit")
        .contains("type is required")
        .contains("ipam.pools[1] is invalid: pool name 'NOT-OK'")
        .contains("runtimeConfig.mac 'nope' is not a MAC address");
  }

  @Test
  void readsAllowPersistentIpsFalseWhenAbsent() {
    assertThat(
            Calls.parse(Calls.env("ADD"), Calls.config("1.0.0", "\"allowPersistentIPs\":true"))
                .config()
                .orElseThrow()
                .allowPersistentIPs())
        .isTrue();
    assertThat(
            Calls.parse(Calls.env("ADD"), Calls.config("1.0.0", ""))
                .config()
                .orElseThrow()
                .allowPersistentIPs())
        .isFalse();
    assertThat(refused("ADD", Calls.config("1.0.0", "\"allowPersistentIPs\":\"yes\"")))
        .hasMessageContaining("allowPersistentIPs must be a boolean, not a string");
  }

  @Test
  void ignoresTheMainPluginsOwnSettingsAndArgs() {
    CniRequest request =
        Calls.parse(
            Calls.env("ADD"),
            Calls.config(
                "1.1.0",
                "\"mtu\":1450,\"args\":{\"cni\":{\"ips\":[\"10.0.0.9\"]},\"labels\":{\"a\":\"b\"}},"
                    + "\"capabilities\":{\"mac\":true},\"cniVersions\":[\"1.0.0\",\"1.1.0\"]"));
    assertThat(request.config()).isPresent();
  }

  @Test
  void malformedJsonIsCode6NamingThePosition() {
    CniException e = refused("ADD", "{\"cniVersion\":\"1.0.0\",\n  \"name\": net}");
    assertThat(e.code().code()).isEqualTo(6);
    assertThat(e.msg()).isEqualTo("cannot decode the network configuration");
    assertThat(e.details()).contains("is not valid JSON").contains("near line 2, column 15");
  }

  static Stream<Arguments> refusedRequests() {
    return Stream.of(
        Arguments.of(
            "an unknown ipam key is an unsupported field with code 2",
            "ADD",
            Calls.withIpam("{\"type\":\"kipam\",\"pools\":[\"a\"],\"subnet\":\"10.1.0.0/16\"}"),
            2,
            "ipam.subnet is not a kipam setting"),
        Arguments.of(
            "an invalid prevResult is named by its path",
            "CHECK",
            Calls.config(
                "0.4.0", "\"prevResult\":{\"ips\":[{\"version\":\"4\",\"address\":\"x/24\"}]}"),
            7,
            "prevResult.ips[0].address is not an IP address"),
        Arguments.of(
            "truncated JSON says the document ends early",
            "DEL",
            "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"",
            6,
            "ends before its value is complete"),
        Arguments.of(
            "a duplicate key is a decoding error",
            "ADD",
            "{\"cniVersion\":\"1.0.0\",\"name\":\"a\",\"name\":\"b\"}",
            6,
            "a key appears twice"),
        Arguments.of(
            "content after the object is a decoding error",
            "ADD",
            Calls.config("1.0.0", "") + " {}",
            6,
            "more content after the first JSON value"),
        Arguments.of("empty stdin is a decoding error", "ADD", "", 6, "is empty"),
        Arguments.of(
            "a JSON value that is not an object is invalid",
            "ADD",
            "[1,2]",
            7,
            "must be a JSON object, not a list"),
        Arguments.of(
            "a cniVersion that is not a string is invalid",
            "ADD",
            "{\"cniVersion\":1.0}",
            7,
            "cniVersion must be a string"),
        Arguments.of(
            "CHECK without prevResult is invalid",
            "CHECK",
            Calls.config("1.0.0", ""),
            7,
            "prevResult is required for CHECK"));
  }

  /** A request refused with its code, the details naming what is wrong. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("refusedRequests")
  void refusesWithTheCodeAndDetailsOfTheProblem(
      String description, String command, String stdin, int code, String detail) {
    CniException e = refused(command, stdin);
    assertThat(e.code().code()).isEqualTo(code);
    assertThat(e.details()).contains(detail);
  }

  @Test
  void invalidUtf8IsADecodingError() {
    byte[] stdin = Calls.bytes(Calls.config("1.0.0", "\"note\":\"__\""));
    int at = new String(stdin, java.nio.charset.StandardCharsets.UTF_8).indexOf("__");
    stdin[at] = (byte) 0xc3;
    stdin[at + 1] = (byte) 0x28;
    CniException e = refused(stdin);
    assertThat(e.code().code()).isEqualTo(6);
  }

  @Test
  void refusesStdinOverOneMebibyteWithoutParsingIt() {
    // Not JSON at all: a parse attempt would report code 6 instead.
    byte[] stdin = new byte[CniRequest.MAX_CONFIG_BYTES + 1];
    Arrays.fill(stdin, (byte) '!');
    CniException e = refused(stdin);
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details()).contains("more than 1048576 bytes (1 MiB)").contains("not parsed");
  }

  @Test
  void acceptsStdinOfExactlyOneMebibyte() {
    String config = Calls.config("1.0.0", "");
    String padded = config + " ".repeat(CniRequest.MAX_CONFIG_BYTES - config.length());
    assertThat(Calls.bytes(padded)).hasSize(CniRequest.MAX_CONFIG_BYTES);
    assertThat(Calls.parse(Calls.env("ADD"), padded).config()).isPresent();
  }

  @Test
  void anUnknownCniVersionIsCode1() {
    CniException e = refused("ADD", Calls.config("0.2.0", ""));
    assertThat(e.code().code()).isEqualTo(1);
    assertThat(e.details())
        .isEqualTo(
            "cniVersion '0.2.0' is not supported; kipam supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0");
    assertThat(e.callerVersion()).isEmpty();
  }

  @Test
  void aMissingCniVersionIsCode1() {
    CniException e =
        refused(
            "ADD",
            "{\"name\":\"n\",\"type\":\"bridge\",\"ipam\":{\"type\":\"kipam\",\"pools\":[\"a\"]}}");
    assertThat(e.code().code()).isEqualTo(1);
  }

  @Test
  void configurationErrorsAreAnsweredInTheCallersVersion() {
    CniException e = refused("ADD", Calls.withIpam("{\"type\":\"other\",\"pools\":[\"a\"]}"));
    assertThat(e.callerVersion()).contains(CniVersion.V1_1_0);
    assertThat(CniResponse.error(e).stdoutText())
        .startsWith("{\"cniVersion\":\"1.1.0\",\"code\":7,");
  }

  @Test
  void environmentErrorsAreAnsweredInTheCallersVersionWhenStdinNamesOne() {
    Map<String, String> env = Calls.env("ADD");
    env.remove("CNI_NETNS");
    CniException e =
        catchThrowableOfType(CniException.class, () -> Calls.parse(env, Calls.config("0.3.1", "")));
    assertThat(e.code().code()).isEqualTo(4);
    assertThat(e.callerVersion()).contains(CniVersion.V0_3_1);
  }

  @Test
  void versionNeedsNoStdinAndAnswersInTheNewestVersion() {
    CniRequest request = CniRequest.parse(Map.of("CNI_COMMAND", "VERSION"), new byte[0]);
    assertThat(request.cniVersion()).isEqualTo(CniVersion.V1_1_0);
    assertThat(request.config()).isEmpty();
  }

  @Test
  void versionAnswersInTheVersionTheCallerAsksFor() {
    CniRequest request =
        Calls.parse(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"0.4.0\"}");
    assertThat(request.cniVersion()).isEqualTo(CniVersion.V0_4_0);
  }

  @Test
  void versionIgnoresAnUnreadableOrUnknownRequest() {
    assertThat(Calls.parse(Map.of("CNI_COMMAND", "VERSION"), "{oops").cniVersion())
        .isEqualTo(CniVersion.V1_1_0);
    assertThat(
            Calls.parse(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"9.9.9\"}")
                .cniVersion())
        .isEqualTo(CniVersion.V1_1_0);
  }

  @Test
  void delWithoutPrevResultIsFine() {
    assertThat(
            Calls.parse(Calls.env("DEL"), Calls.config("1.0.0", ""))
                .config()
                .orElseThrow()
                .prevResult())
        .isEmpty();
  }

  static Stream<Arguments> prevResults() {
    IpamResult dual =
        new IpamResult(
            java.util.List.of(
                IpConfig.inPool(
                    IpAddress.parse("10.244.1.7"),
                    Cidr.parse("10.244.0.0/16"),
                    IpAddress.parse("10.244.0.1")),
                IpConfig.inPool(
                    IpAddress.parse("fd00:10:244::7"), Cidr.parse("fd00:10:244::/64"), null)),
            java.util.List.of(Route.to(Cidr.parse("0.0.0.0/0"))),
            Dns.NONE);
    return Stream.of(CniVersion.values())
        .flatMap(
            v ->
                Stream.of(CniCommand.CHECK, CniCommand.DEL)
                    .filter(v::allows)
                    .map(c -> Arguments.of(v, c, dual)));
  }

  @ParameterizedTest(name = "{1} in {0}")
  @MethodSource("prevResults")
  void readsThePrevResultOfEachVersionIntoTheSameValue(
      CniVersion version, CniCommand command, IpamResult expected) {
    String stdin = Calls.config(version.text(), "\"prevResult\":" + expected.toJson(version));
    NetworkConfig config = Calls.parse(Calls.env(command), stdin).config().orElseThrow();
    assertThat(config.prevResult()).contains(expected);
  }

  @ParameterizedTest
  @EnumSource(
      value = CniCommand.class,
      names = {"ADD", "GC", "STATUS"})
  void commandsOtherThanCheckAndDelIgnorePrevResult(CniCommand command) {
    String stdin =
        Calls.config("1.1.0", "\"prevResult\":\"not a result\",\"cni.dev/valid-attachments\":[]");
    assertThat(Calls.parse(Calls.env(command), stdin).config().orElseThrow().prevResult())
        .isEmpty();
  }

  @Test
  void readsTheMacFromTheMacCapabilityInCanonicalForm() {
    String stdin = Calls.config("1.0.0", "\"runtimeConfig\":{\"mac\":\"0A-58-0A-F4-00-05\"}");
    assertThat(Calls.parse(Calls.env("ADD"), stdin).config().orElseThrow().mac())
        .contains("0a:58:0a:f4:00:05");
  }

  @Test
  void readsTheMacFromCniArgsWhenTheConfigHasNone() {
    Map<String, String> env = Calls.env("ADD");
    env.put("CNI_ARGS", env.get("CNI_ARGS") + ";MAC=0a:58:0a:f4:00:06");
    assertThat(Calls.parse(env, Calls.config("1.0.0", "")).config().orElseThrow().mac())
        .contains("0a:58:0a:f4:00:06");
  }

  @Test
  void refusesTwoDifferentMacs() {
    Map<String, String> env = Calls.env("ADD");
    env.put("CNI_ARGS", env.get("CNI_ARGS") + ";MAC=0a:58:0a:f4:00:06");
    CniException e =
        catchThrowableOfType(
            CniException.class,
            () ->
                Calls.parse(
                    env,
                    Calls.config("1.0.0", "\"runtimeConfig\":{\"mac\":\"0a:58:0a:f4:00:05\"}")));
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details()).contains("differs from CNI_ARGS MAC");
  }
}
