package io.kipam.operator.cli.importer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class NadConfigParserTest {

  private static NadConfigParser.Parsed parse(String config) {
    return NadConfigParser.parse("team-a", "blue", config);
  }

  @Test
  void readsASinglePluginWithRangeExcludeAndNetworkName() {
    var parsed =
        parse(
            """
            {"cniVersion":"1.0.0","name":"blue-net","type":"macvlan","ipam":{"type":"whereabouts",
             "range":"10.70.0.0/24","range_start":"10.70.0.10","range_end":"10.70.0.200",
             "exclude":["10.70.0.32/28"],"network_name":"blue","gateway":"10.70.0.1"}}
            """);
    assertThat(parsed.problems()).isEmpty();
    WhereaboutsNetwork network = parsed.network().orElseThrow();
    assertThat(network.nad()).isEqualTo("team-a/blue");
    assertThat(network.cniName()).isEqualTo("blue-net");
    assertThat(network.networkName()).isEqualTo("blue");
    WhereaboutsRange range = network.ranges().get(0);
    assertThat(range.cidr()).isEqualTo(Cidr.parse("10.70.0.0/24"));
    assertThat(range.rangeStart()).isEqualTo(IpAddress.parse("10.70.0.10"));
    assertThat(range.rangeEnd()).isEqualTo(IpAddress.parse("10.70.0.200"));
    assertThat(range.exclude()).containsExactly("10.70.0.32/28");
    assertThat(range.gateway()).isEqualTo("10.70.0.1");
    assertThat(range.whereaboutsPoolName("blue")).isEqualTo("blue-10.70.0.0-24");
  }

  @Test
  void readsAPluginListWithIpRangesAndTheFirstLastSyntax() {
    var parsed =
        parse(
            """
            {"name":"multi","plugins":[{"type":"bridge"},{"type":"macvlan","ipam":{
              "type":"whereabouts","range":"192.168.2.225-192.168.2.230/28",
              "ipRanges":[{"range":"fd00:70::/120","exclude":["fd00:70::10/124"]}]}}]}
            """);
    assertThat(parsed.problems()).isEmpty();
    List<WhereaboutsRange> ranges = parsed.network().orElseThrow().ranges();
    assertThat(ranges).hasSize(2);
    assertThat(ranges.get(0).cidr()).isEqualTo(Cidr.parse("192.168.2.224/28"));
    assertThat(ranges.get(0).rangeStart()).isEqualTo(IpAddress.parse("192.168.2.225"));
    assertThat(ranges.get(0).rangeEnd()).isEqualTo(IpAddress.parse("192.168.2.230"));
    assertThat(ranges.get(1).whereaboutsPoolName("")).isEqualTo("fd00-70---120");
  }

  @Test
  void aConfigOfAnotherIpamIsNotOurs() {
    var parsed = parse("{\"name\":\"x\",\"ipam\":{\"type\":\"host-local\"}}");
    assertThat(parsed.network()).isEmpty();
    assertThat(parsed.problems()).isEmpty();
  }

  @Test
  void everyBadFieldIsNamedWithItsObjectAndPath() {
    assertThat(parse("{not json").problems())
        .singleElement()
        .asString()
        .startsWith("NetworkAttachmentDefinition team-a/blue spec.config: is not JSON");
    var parsed =
        parse(
            """
            {"name":"n","ipam":{"type":"whereabouts","range":"10.70.0.0",
             "ipRanges":[{"range":"10.71.0.0/24","range_start":"10.72.0.1","exclude":["x"]}],
             "node_slice_size":"/26"}}
            """);
    assertThat(parsed.network()).isEmpty();
    assertThat(parsed.problems().stream().map(BadInput::field))
        .containsExactlyInAnyOrder(
            "spec.config.ipam.node_slice_size",
            "spec.config.ipam.range",
            "spec.config.ipam.ipRanges[0].exclude[0]",
            "spec.config.ipam.ipRanges[0].range_start");
    assertThat(parsed.problems().toString())
        .contains("'10.70.0.0' is neither a CIDR nor first-last/prefix")
        .contains("10.72.0.1 is not inside 10.71.0.0/24");
  }
}
