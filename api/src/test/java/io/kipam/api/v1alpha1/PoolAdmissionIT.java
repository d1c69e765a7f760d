package io.kipam.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.labels.Selectors;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pool CRD as the API server enforces it: samples pass, bad pools and bad selectors are refused
 * by name.
 */
@WithControlPlane
class PoolAdmissionIT {

  private final KubernetesClient client;

  PoolAdmissionIT(KubernetesClient client) {
    this.client = client;
  }

  @BeforeAll
  static void installCrds(KubernetesClient client) {
    KipamCrds.install(client);
  }

  @Test
  void everySampleIsAccepted() throws IOException {
    Path samples = ControlPlaneBinaries.repositoryRoot().resolve("config/samples");
    List<Path> files;
    try (Stream<Path> list = Files.list(samples)) {
      files = list.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    }
    assertThat(files).hasSizeGreaterThanOrEqualTo(4);
    for (Path file : files) {
      try (InputStream in = Files.newInputStream(file)) {
        List<HasMetadata> objects = client.load(in).items();
        assertThat(objects).as(file.getFileName().toString()).isNotEmpty();
        for (HasMetadata object : objects) {
          client.resource(object).forceConflicts().serverSideApply();
          assertThat(client.resources(IPPool.class).withName(object.getMetadata().getName()).get())
              .as("%s from %s", object.getMetadata().getName(), file.getFileName())
              .isNotNull();
        }
      }
    }
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("invalidPools")
  void invalidPoolIsRejectedWithAMessageNamingTheField(
      String description, Consumer<IPPool> breakIt, String field, String expectedMessage) {
    IPPool pool = validPool();
    breakIt.accept(pool);

    assertThatThrownBy(() -> client.resource(pool).create())
        .as(description)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).as("HTTP status").isEqualTo(422);
              assertThat(e.getMessage()).contains(field).contains(expectedMessage);
            });
    assertThat(client.resources(IPPool.class).withName(pool.getMetadata().getName()).get())
        .as("nothing was stored")
        .isNull();
  }

  static Stream<Arguments> invalidPools() {
    return Stream.of(
        bad("CIDR without prefix", p -> cidr(p, "10.20.0.0"), "spec.cidr", "must be a CIDR"),
        bad("CIDR that is no address", p -> cidr(p, "banana/24"), "spec.cidr", "must be a CIDR"),
        bad(
            "IPv4 CIDR with leading zeros",
            p -> cidr(p, "010.20.0.0/24"),
            "spec.cidr",
            "must be a CIDR"),
        bad("IPv6 CIDR with a zone", p -> cidr(p, "fe80::%eth0/64"), "spec.cidr", "must be a CIDR"),
        bad(
            "IPv4-mapped IPv6 CIDR",
            p -> cidr(p, "::ffff:10.20.0.0/120"),
            "spec.cidr",
            "must be a CIDR"),
        bad(
            "upper-case IPv6 CIDR",
            p -> cidr(p, "FD00:20::/64"),
            "spec.cidr",
            "must be written canonically"),
        bad(
            "uncompressed IPv6 CIDR",
            p -> cidr(p, "fd00:20:0:0:0:0:0:0/64"),
            "spec.cidr",
            "must be written canonically"),
        bad(
            "IPv4 CIDR with host bits",
            p -> cidr(p, "10.20.0.1/24"),
            "spec.cidr",
            "has host bits set"),
        bad(
            "IPv6 CIDR with host bits",
            p -> cidr(p, "fd00:20::1/64"),
            "spec.cidr",
            "has host bits set"),
        bad("missing CIDR", p -> cidr(p, null), "spec.cidr", "Required value"),
        bad(
            "range start outside the CIDR",
            p -> p.getSpec().setRangeStart("10.21.0.5"),
            "spec.rangeStart",
            "must lie inside spec.cidr"),
        bad(
            "range end outside the CIDR",
            p -> p.getSpec().setRangeEnd("10.19.255.255"),
            "spec.rangeEnd",
            "must lie inside spec.cidr"),
        bad(
            "reversed IPv4 range",
            p -> range(p, "10.20.0.200", "10.20.0.100"),
            "spec.rangeStart",
            "must not be after spec.rangeEnd"),
        bad(
            "reversed IPv4 range across a high bit",
            p -> range(p, "10.20.0.128", "10.20.0.127"),
            "spec.rangeStart",
            "must not be after spec.rangeEnd"),
        bad(
            "reversed IPv6 range",
            p -> {
              cidr(p, "fd00:20::/64");
              p.getSpec().setGateway(null);
              range(p, "fd00:20::ff", "fd00:20::10");
            },
            "spec.rangeStart",
            "must not be after spec.rangeEnd"),
        bad(
            "IPv6 range start in an IPv4 pool",
            p -> p.getSpec().setRangeStart("fd00::5"),
            "spec.rangeStart",
            "same IP family as spec.cidr"),
        bad(
            "IPv6 range end in an IPv4 pool",
            p -> p.getSpec().setRangeEnd("fd00::5"),
            "spec.rangeEnd",
            "same IP family as spec.cidr"),
        bad(
            "range start that is no address",
            p -> p.getSpec().setRangeStart("10.20.0"),
            "spec.rangeStart",
            "must be a canonical IP address"),
        bad(
            "non-canonical IPv6 range end",
            p -> {
              cidr(p, "fd00:20::/64");
              p.getSpec().setGateway(null);
              p.getSpec().setRangeEnd("fd00:20:0::ff");
            },
            "spec.rangeEnd",
            "must be a canonical IP address"),
        bad(
            "exclude CIDR outside the pool",
            p -> p.getSpec().setExclude(List.of("10.21.0.0/28")),
            "spec.exclude",
            "\"10.21.0.0/28\" must be a canonical address or CIDR"),
        bad(
            "exclude address outside the pool",
            p -> p.getSpec().setExclude(List.of("10.20.0.8", "10.30.0.1")),
            "spec.exclude",
            "\"10.30.0.1\" must be a canonical address or CIDR"),
        bad(
            "exclude CIDR with host bits",
            p -> p.getSpec().setExclude(List.of("10.20.0.5/28")),
            "spec.exclude",
            "\"10.20.0.5/28\""),
        bad(
            "exclude of the other family",
            p -> p.getSpec().setExclude(List.of("fd00::/64")),
            "spec.exclude",
            "\"fd00::/64\""),
        bad(
            "exclude that is no address",
            p -> p.getSpec().setExclude(List.of("nope")),
            "spec.exclude",
            "\"nope\""),
        bad(
            "gateway outside the CIDR",
            p -> p.getSpec().setGateway("10.21.0.1"),
            "spec.gateway",
            "must lie inside spec.cidr"),
        bad(
            "gateway of the other family",
            p -> p.getSpec().setGateway("fd00::1"),
            "spec.gateway",
            "must lie inside spec.cidr"),
        bad(
            "gateway that is no address",
            p -> p.getSpec().setGateway("gateway"),
            "spec.gateway",
            "must be a canonical IP address"),
        bad(
            "block size wider than the pool",
            p -> p.getSpec().setBlockSize(16),
            "spec.blockSize",
            "is wider than the pool"),
        bad(
            "block size longer than an IPv4 address",
            p -> p.getSpec().setBlockSize(33),
            "spec.blockSize",
            "is longer than an address"),
        bad(
            "block size beyond any family",
            p -> p.getSpec().setBlockSize(129),
            "spec.blockSize",
            "less than or equal to 128"),
        bad(
            "negative block size",
            p -> p.getSpec().setBlockSize(-1),
            "spec.blockSize",
            "greater than or equal to 0"),
        bad(
            "route to the other family",
            p -> p.getSpec().setRoutes(List.of(new Route("::/0", null))),
            "spec.routes",
            "family of spec.cidr"),
        bad(
            "route via something that is no address",
            p -> p.getSpec().setRoutes(List.of(new Route("0.0.0.0/0", "router"))),
            "spec.routes",
            "family of spec.cidr"),
        bad(
            "pool name with dots",
            p -> p.getMetadata().setName("pool.with.dots"),
            "metadata.name",
            "must be a DNS label"),
        bad(
            "pool name longer than a label",
            p -> p.getMetadata().setName("p".repeat(64)),
            "metadata.name",
            "must be a DNS label"),
        bad(
            "network name with capitals",
            p -> p.getSpec().setNetwork("Storage"),
            "spec.network",
            "should match"),
        bad(
            "zero blocks per node",
            p -> p.getSpec().setMaxBlocksPerNode(0),
            "spec.maxBlocksPerNode",
            "greater than or equal to 1"),
        bad(
            "negative reuse delay",
            p -> p.getSpec().setReuseDelaySeconds(-5),
            "spec.reuseDelaySeconds",
            "greater than or equal to 0"));
  }

  @Test
  void selectorsUsingEveryOperatorAreAcceptedAndReadAsTheyWereWritten() {
    String prefix = ("p".repeat(49) + ".").repeat(5) + "abc"; // 253 characters, the most
    IPPool pool = validPool();
    pool.getSpec()
        .setNodeSelector(
            new LabelSelectorBuilder()
                .addToMatchLabels("kubernetes.io/os", "linux")
                .addToMatchLabels(prefix + "/" + "n".repeat(63), "v".repeat(63))
                .addToMatchLabels("empty", "")
                .addToMatchExpressions(
                    expression("tier", "In", "b", "a"),
                    expression("env", "NotIn", "dev", ""),
                    expression("example.com/gpu", "Exists"),
                    expression("legacy", "DoesNotExist"))
                .build());
    pool.getSpec().setNamespaceSelector(labels("kubernetes.io/metadata.name", "q0"));
    try {
      IPPool stored = client.resource(pool).create();

      assertThat(Selectors.describe(stored.getSpec().getNodeSelector()))
          .isEqualTo(
              "empty=,env notin (,dev),example.com/gpu,kubernetes.io/os=linux,!legacy,"
                  + prefix
                  + "/"
                  + "n".repeat(63)
                  + "="
                  + "v".repeat(63)
                  + ",tier in (a,b)");
      assertThat(
              Selectors.matches(
                  stored.getSpec().getNamespaceSelector(),
                  Map.of("kubernetes.io/metadata.name", "q0")))
          .isTrue();
    } finally {
      client.resource(pool).delete();
    }
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("invalidSelectors")
  void invalidSelectorIsRefusedAtAdmissionAsTheMatcherRefusesIt(
      String description, LabelSelector selector, String field, String expectedMessage) {
    assertThatThrownBy(() -> Selectors.parse(selector))
        .as("the matcher refuses it too")
        .isInstanceOf(IllegalArgumentException.class);
    Map<String, BiConsumer<IPPoolSpec, LabelSelector>> selectors =
        Map.of(
            "spec.nodeSelector", IPPoolSpec::setNodeSelector,
            "spec.namespaceSelector", IPPoolSpec::setNamespaceSelector);
    selectors.forEach(
        (path, set) -> {
          IPPool pool = validPool();
          set.accept(pool.getSpec(), selector);
          assertThatThrownBy(() -> client.resource(pool).create())
              .as("%s in %s", description, path)
              .isInstanceOfSatisfying(
                  KubernetesClientException.class,
                  e -> {
                    assertThat(e.getCode()).as("HTTP status").isEqualTo(422);
                    assertThat(e.getMessage()).contains(path + field).contains(expectedMessage);
                  });
        });
  }

  static Stream<Arguments> invalidSelectors() {
    return Stream.of(
        badSelector(
            "In without values",
            expressions(expression("tier", "In")),
            ".matchExpressions[0].values",
            "the requirement on key \"tier\": In needs at least one value in values"),
        badSelector(
            "NotIn without values",
            expressions(expression("tier", "NotIn")),
            ".matchExpressions[0].values",
            "the requirement on key \"tier\": NotIn needs at least one value in values"),
        badSelector(
            "Exists with a value",
            expressions(expression("ok", "Exists"), expression("legacy", "Exists", "yes")),
            ".matchExpressions[1].values",
            "the requirement on key \"legacy\": Exists takes no values"),
        badSelector(
            "DoesNotExist with values",
            expressions(expression("legacy", "DoesNotExist", "a", "b")),
            ".matchExpressions[0].values",
            "the requirement on key \"legacy\": DoesNotExist takes no values"),
        badSelector(
            "operator in lower case",
            expressions(expression("tier", "in", "a")),
            ".matchExpressions[0].operator",
            "Unsupported value: \"in\""),
        badSelector(
            "operator Gt, which node affinity has but label selectors do not",
            expressions(expression("tier", "Gt", "1")),
            ".matchExpressions[0].operator",
            "Unsupported value: \"Gt\""),
        badSelector(
            "requirement without a key",
            expressions(new LabelSelectorRequirement(null, "Exists", null)),
            ".matchExpressions[0].key",
            "Required value"),
        badSelector(
            "key with a space",
            expressions(expression("bad key", "Exists")),
            ".matchExpressions[0].key",
            "must be a label key"),
        badSelector(
            "key with two slashes",
            expressions(expression("a/b/c", "Exists")),
            ".matchExpressions[0].key",
            "must be a label key"),
        badSelector(
            "key with a prefix longer than 253 characters",
            expressions(expression("p".repeat(254) + "/tier", "Exists")),
            ".matchExpressions[0].key",
            "must be a label key"),
        badSelector(
            "key with a name longer than 63 characters",
            expressions(expression("n".repeat(64), "Exists")),
            ".matchExpressions[0].key",
            "must be a label key"),
        badSelector(
            "value that is no label value",
            expressions(expression("tier", "In", "a", "-b")),
            ".matchExpressions[0].values",
            "value \"-b\" is not a label value"),
        badSelector(
            "matchLabels key that is no label key",
            labels("bad key", "x"),
            ".matchLabels",
            "entry \"bad key\" is not a label key with a label value"),
        badSelector(
            "matchLabels value that is no label value",
            labels("app", "web server"),
            ".matchLabels",
            "entry \"app\" is not a label key with a label value"));
  }

  private static Arguments badSelector(
      String description, LabelSelector selector, String field, String expectedMessage) {
    return Arguments.of(description, selector, field, expectedMessage);
  }

  private static LabelSelector labels(String key, String value) {
    return new LabelSelectorBuilder().addToMatchLabels(key, value).build();
  }

  private static LabelSelector expressions(LabelSelectorRequirement... expressions) {
    return new LabelSelectorBuilder().addToMatchExpressions(expressions).build();
  }

  private static LabelSelectorRequirement expression(
      String key, String operator, String... values) {
    return new LabelSelectorRequirement(key, operator, List.of(values));
  }

  private static Arguments bad(
      String description, Consumer<IPPool> breakIt, String field, String expectedMessage) {
    return Arguments.of(description, breakIt, field, expectedMessage);
  }

  private static void cidr(IPPool pool, String cidr) {
    pool.getSpec().setCidr(cidr);
  }

  private static void ipv6(IPPool pool) {
    pool.getSpec().setCidr("fd00:20::/64");
    pool.getSpec().setGateway("fd00:20::1");
    pool.getSpec().setBlockSize(120);
  }

  private static void range(IPPool pool, String start, String end) {
    pool.getSpec().setRangeStart(start);
    pool.getSpec().setRangeEnd(end);
  }

  /** A pool every case starts from; the test asserts it is valid on its own. */
  static IPPool validPool() {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName("candidate-" + System.nanoTime()).build());
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.20.0.0/24");
    spec.setGateway("10.20.0.1");
    spec.setBlockSize(28);
    pool.setSpec(spec);
    return pool;
  }

  @ParameterizedTest(name = "{0} .. {1}")
  @org.junit.jupiter.params.provider.CsvSource({
    "10.20.0.10, 10.20.0.10",
    "10.20.0.127, 10.20.0.128",
    "10.20.0.0, 10.20.0.255",
    "fd00:20::10, fd00:20::ff",
    "fd00:20::ffff, fd00:20::1:0",
    "fd00:20::, fd00:20::ffff:ffff:ffff:ffff"
  })
  void orderedRangesAreAccepted(String start, String end) {
    IPPool pool = validPool();
    if (start.contains(":")) {
      ipv6(pool);
    }
    pool.getSpec().setRangeStart(start);
    pool.getSpec().setRangeEnd(end);
    try {
      assertThat(client.resource(pool).create()).isNotNull();
    } finally {
      client.resource(pool).delete();
    }
  }

  @Test
  void theStartingPoolIsValid() {
    IPPool pool = validPool();
    pool.getSpec().setRangeStart("10.20.0.10");
    pool.getSpec().setRangeEnd("10.20.0.10");
    pool.getSpec().setExclude(List.of("10.20.0.8/29", "10.20.0.200"));
    try {
      assertThat(client.resource(pool).create().getSpec().getReuseDelaySeconds())
          .as("defaulted")
          .isEqualTo(30);
    } finally {
      client.resource(pool).delete();
    }
  }
}
