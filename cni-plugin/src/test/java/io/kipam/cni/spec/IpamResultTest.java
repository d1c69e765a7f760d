package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class IpamResultTest {

  static final IpConfig V4 =
      IpConfig.inPool(
          IpAddress.parse("10.244.1.7"),
          Cidr.parse("10.244.0.0/16"),
          IpAddress.parse("10.244.0.1"));
  static final IpConfig V6 =
      IpConfig.inPool(
          IpAddress.parse("fd00:10:244::7"),
          Cidr.parse("fd00:10:244::/64"),
          IpAddress.parse("fd00:10:244::1"));

  static final IpamResult IPV4 =
      new IpamResult(
          List.of(V4),
          List.of(Route.to(Cidr.parse("0.0.0.0/0"))),
          new Dns(
              List.of(IpAddress.parse("10.96.0.10")),
              Optional.of("cluster.local"),
              List.of("default.svc.cluster.local", "svc.cluster.local"),
              List.of("ndots:5")));
  static final IpamResult IPV6 =
      new IpamResult(
          List.of(V6),
          List.of(Route.via(Cidr.parse("::/0"), IpAddress.parse("fd00:10:244::1"))),
          Dns.NONE);
  static final IpamResult DUAL =
      new IpamResult(
          List.of(V4, V6),
          List.of(Route.to(Cidr.parse("0.0.0.0/0")), Route.to(Cidr.parse("::/0"))),
          Dns.NONE);

  private static final String V4_DNS =
      "\"dns\":{\"nameservers\":[\"10.96.0.10\"],\"domain\":\"cluster.local\","
          + "\"search\":[\"default.svc.cluster.local\",\"svc.cluster.local\"],"
          + "\"options\":[\"ndots:5\"]}";

  static Stream<Arguments> renderings() {
    return Stream.of(
        Arguments.of(
            CniVersion.V0_3_1,
            IPV4,
            "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.244.1.7/16\","
                + "\"gateway\":\"10.244.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],"
                + V4_DNS
                + "}"),
        Arguments.of(
            CniVersion.V0_3_1,
            IPV6,
            "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"6\",\"address\":\"fd00:10:244::7/64\","
                + "\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"::/0\",\"gw\":\"fd00:10:244::1\"}]}"),
        Arguments.of(
            CniVersion.V0_3_1,
            DUAL,
            "{\"cniVersion\":\"0.3.1\",\"ips\":["
                + "{\"version\":\"4\",\"address\":\"10.244.1.7/16\",\"gateway\":\"10.244.0.1\"},"
                + "{\"version\":\"6\",\"address\":\"fd00:10:244::7/64\",\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"::/0\"}]}"),
        Arguments.of(
            CniVersion.V0_4_0,
            IPV4,
            "{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"4\",\"address\":\"10.244.1.7/16\","
                + "\"gateway\":\"10.244.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],"
                + V4_DNS
                + "}"),
        Arguments.of(
            CniVersion.V0_4_0,
            IPV6,
            "{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"6\",\"address\":\"fd00:10:244::7/64\","
                + "\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"::/0\",\"gw\":\"fd00:10:244::1\"}]}"),
        Arguments.of(
            CniVersion.V0_4_0,
            DUAL,
            "{\"cniVersion\":\"0.4.0\",\"ips\":["
                + "{\"version\":\"4\",\"address\":\"10.244.1.7/16\",\"gateway\":\"10.244.0.1\"},"
                + "{\"version\":\"6\",\"address\":\"fd00:10:244::7/64\",\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"::/0\"}]}"),
        Arguments.of(
            CniVersion.V1_0_0,
            IPV4,
            "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.244.1.7/16\","
                + "\"gateway\":\"10.244.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],"
                + V4_DNS
                + "}"),
        Arguments.of(
            CniVersion.V1_0_0,
            IPV6,
            "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"fd00:10:244::7/64\","
                + "\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"::/0\",\"gw\":\"fd00:10:244::1\"}]}"),
        Arguments.of(
            CniVersion.V1_0_0,
            DUAL,
            "{\"cniVersion\":\"1.0.0\",\"ips\":["
                + "{\"address\":\"10.244.1.7/16\",\"gateway\":\"10.244.0.1\"},"
                + "{\"address\":\"fd00:10:244::7/64\",\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"::/0\"}]}"),
        Arguments.of(
            CniVersion.V1_1_0,
            IPV4,
            "{\"cniVersion\":\"1.1.0\",\"ips\":[{\"address\":\"10.244.1.7/16\","
                + "\"gateway\":\"10.244.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],"
                + V4_DNS
                + "}"),
        Arguments.of(
            CniVersion.V1_1_0,
            IPV6,
            "{\"cniVersion\":\"1.1.0\",\"ips\":[{\"address\":\"fd00:10:244::7/64\","
                + "\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"::/0\",\"gw\":\"fd00:10:244::1\"}]}"),
        Arguments.of(
            CniVersion.V1_1_0,
            DUAL,
            "{\"cniVersion\":\"1.1.0\",\"ips\":["
                + "{\"address\":\"10.244.1.7/16\",\"gateway\":\"10.244.0.1\"},"
                + "{\"address\":\"fd00:10:244::7/64\",\"gateway\":\"fd00:10:244::1\"}],"
                + "\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"::/0\"}]}"));
  }

  @ParameterizedTest(name = "{0}: {2}")
  @MethodSource("renderings")
  void rendersTheExactJsonOfEachVersion(CniVersion version, IpamResult result, String json) {
    assertThat(result.toJson(version)).isEqualTo(json);
    assertThat(CniResponse.result(version, result).stdoutText()).isEqualTo(json);
  }

  @ParameterizedTest(name = "{0}: {2}")
  @MethodSource("renderings")
  void readsItsOwnRenderingBackIntoTheSameValue(
      CniVersion version, IpamResult result, String json) {
    assertThat(IpamResult.parse(json)).isEqualTo(result);
  }

  @ParameterizedTest
  @EnumSource(CniVersion.class)
  void neverRendersInterfacesForAnIpamResult(CniVersion version) {
    assertThat(DUAL.toJson(version)).doesNotContain("interface");
  }

  @Test
  void anAddressWithoutGatewayHasNoGatewayField() {
    IpamResult result =
        IpamResult.of(
            IpConfig.inPool(IpAddress.parse("192.0.2.9"), Cidr.parse("192.0.2.0/28"), null));
    assertThat(result.toJson(CniVersion.V1_0_0))
        .isEqualTo("{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.0.2.9/28\"}]}");
  }

  @Test
  void readsAMainPluginsPrevResultIgnoringInterfaces() {
    String bridgeResult =
        "{\"cniVersion\":\"0.4.0\",\"interfaces\":[{\"name\":\"cni0\",\"mac\":\"00:11:22:33:44:55\"},"
            + "{\"name\":\"eth0\",\"mac\":\"99:88:77:66:55:44\",\"sandbox\":\"/var/run/netns/blue\"}],"
            + "\"ips\":[{\"version\":\"4\",\"interface\":1,\"address\":\"10.244.1.7/16\","
            + "\"gateway\":\"10.244.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{}}";
    assertThat(IpamResult.parse(bridgeResult))
        .isEqualTo(
            new IpamResult(List.of(V4), List.of(Route.to(Cidr.parse("0.0.0.0/0"))), Dns.NONE));
  }

  @Test
  void readsA110ResultWithRouteAttributesItDoesNotUse() {
    String result =
        "{\"cniVersion\":\"1.1.0\",\"ips\":[{\"address\":\"fd00:10:244::7/64\"}],"
            + "\"routes\":[{\"dst\":\"::/0\",\"mtu\":1400,\"priority\":10,\"table\":254,\"scope\":0}]}";
    assertThat(IpamResult.parse(result).routes()).containsExactly(Route.to(Cidr.parse("::/0")));
  }

  @Test
  void readsNonCanonicalAddressSpellingsIntoCanonicalValues() {
    IpamResult result = IpamResult.parse("{\"ips\":[{\"address\":\"FD00:10:244:0:0:0:0:7/64\"}]}");
    assertThat(result.ips().get(0).addressText()).isEqualTo("fd00:10:244::7/64");
  }

  @Test
  void refusesAFamilyFieldThatContradictsTheAddress() {
    CniException e =
        catchThrowableOfType(
            CniException.class,
            () ->
                IpamResult.parse(
                    "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"6\",\"address\":\"10.0.0.5/24\"}]}"));
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details()).contains("ips[0].version '6' does not match the IPv4 address");
  }

  @Test
  void namesEveryInvalidFieldOfAResultByPath() {
    CniException e =
        catchThrowableOfType(
            CniException.class,
            () ->
                IpamResult.parse(
                    "{\"ips\":[{\"address\":\"10.0.0.5\"},{\"address\":\"10.0.0.5/33\"},"
                        + "{\"address\":\"10.0.0.6/24\",\"gateway\":\"fd00::1\"}],"
                        + "\"routes\":[{\"dst\":\"10.0.0.1/24\"},{\"gw\":\"10.0.0.1\"}],"
                        + "\"dns\":{\"nameservers\":[\"dns.example\"]}}"));
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details())
        .contains("ips[0].address '10.0.0.5' has no prefix length")
        .contains("ips[1].address '10.0.0.5/33' has an invalid prefix length")
        .contains("ips[2].gateway is not of the same family")
        .contains("routes[0].dst is not a network")
        .contains("routes[1].dst is required")
        .contains("dns.nameservers[0] is not an IP address");
  }

  @Test
  void refusesAResultOfAnUnsupportedVersion() {
    CniException e =
        catchThrowableOfType(
            CniException.class,
            () -> IpamResult.parse("{\"cniVersion\":\"0.2.0\",\"ip4\":{\"ip\":\"10.0.0.5/24\"}}"));
    assertThat(e.details()).contains("cniVersion '0.2.0' is not a supported version");
  }

  @Test
  void anAddressOutsideItsPoolIsAProgrammingError() {
    assertThatThrownBy(
            () -> IpConfig.inPool(IpAddress.parse("10.1.0.1"), Cidr.parse("10.0.0.0/16"), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not inside");
  }
}
