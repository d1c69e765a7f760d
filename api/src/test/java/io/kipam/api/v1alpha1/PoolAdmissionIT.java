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
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pool CRD as the API server enforces it: samples pass, bad pools and bad selectors are refused
 * by name, and a pool's geometry (cidr, blockSize, network) cannot change while the rest can.
 */
@WithControlPlane(crds = true)
class PoolAdmissionIT {

  private final KubernetesClient client = ControlPlane.shared().client();

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
          // Pools, and the optional admission policy that asks for kipam.io/ip.
          assertThat(client.resource(object).get())
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

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("geometryChanges")
  void changingAPoolsGeometryIsRefused(
      String description, Consumer<IPPool> before, Consumer<IPPool> change, String message) {
    IPPool pool = validPool();
    before.accept(pool);
    IPPool stored = client.resource(pool).create();
    try {
      IPPool changed = client.resources(IPPool.class).withName(name(pool)).get();
      change.accept(changed);

      assertThatThrownBy(() -> client.resource(changed).update())
          .as(description)
          .isInstanceOfSatisfying(
              KubernetesClientException.class,
              e -> {
                assertThat(e.getCode()).as("HTTP status").isEqualTo(422);
                assertThat(e.getMessage()).contains("spec: Invalid value").contains(message);
              });
      IPPool after = client.resources(IPPool.class).withName(name(pool)).get();
      assertThat(after.getMetadata().getGeneration()).isEqualTo(1L);
      assertThat(after.getSpec().getCidr()).isEqualTo(stored.getSpec().getCidr());
      assertThat(after.getSpec().getBlockSize()).isEqualTo(stored.getSpec().getBlockSize());
      assertThat(after.getSpec().getNetwork()).isEqualTo(stored.getSpec().getNetwork());
    } finally {
      client.resource(pool).delete();
    }
  }

  static Stream<Arguments> geometryChanges() {
    Consumer<IPPool> asIs = p -> {};
    Consumer<IPPool> inNetworkBlue = p -> p.getSpec().setNetwork("blue");
    Consumer<IPPool> withoutBlockSize = p -> p.getSpec().setBlockSize(null);
    return Stream.of(
        change("cidr widened", asIs, p -> cidr(p, "10.20.0.0/23"), CIDR_IMMUTABLE),
        change("cidr narrowed", asIs, p -> cidr(p, "10.20.0.0/25"), CIDR_IMMUTABLE),
        change(
            "cidr moved",
            asIs,
            p -> {
              cidr(p, "10.21.0.0/24");
              p.getSpec().setGateway("10.21.0.1");
            },
            CIDR_IMMUTABLE),
        change("blockSize changed", asIs, p -> p.getSpec().setBlockSize(27), BLOCK_SIZE_IMMUTABLE),
        change("blockSize unset", asIs, withoutBlockSize, BLOCK_SIZE_IMMUTABLE),
        change(
            "blockSize set",
            withoutBlockSize,
            p -> p.getSpec().setBlockSize(28),
            BLOCK_SIZE_IMMUTABLE),
        change(
            "blockSize set to the default (/26) it had",
            withoutBlockSize,
            p -> p.getSpec().setBlockSize(26),
            BLOCK_SIZE_IMMUTABLE),
        change(
            "network changed",
            inNetworkBlue,
            p -> p.getSpec().setNetwork("red"),
            NETWORK_IMMUTABLE),
        change(
            "network unset", inNetworkBlue, p -> p.getSpec().setNetwork(null), NETWORK_IMMUTABLE),
        change("network set", asIs, p -> p.getSpec().setNetwork("blue"), NETWORK_IMMUTABLE));
  }

  private static final String CIDR_IMMUTABLE =
      "spec.cidr is immutable: blocks and addresses were carved from it; create a new pool instead";
  private static final String BLOCK_SIZE_IMMUTABLE =
      "spec.blockSize is immutable (also setting or unsetting it): nodes hold blocks of the old"
          + " size; create a new pool instead";
  private static final String NETWORK_IMMUTABLE =
      "spec.network is immutable (also setting or unsetting it): overlap with other pools was"
          + " checked for the old network; create a new pool instead";

  private static Arguments change(
      String description, Consumer<IPPool> before, Consumer<IPPool> change, String message) {
    return Arguments.of(description, before, change, message);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("mutableChanges")
  void changingWhatAPoolHandsOutIsAccepted(
      String description, Consumer<IPPool> change, BiConsumer<IPPool, IPPool> check) {
    IPPool pool = validPool();
    pool.getSpec().setNetwork("blue");
    pool.getSpec().setRangeEnd("10.20.0.200");
    client.resource(pool).create();
    try {
      IPPool changed = client.resources(IPPool.class).withName(name(pool)).get();
      change.accept(changed);

      IPPool updated = client.resource(changed).update();

      assertThat(updated.getMetadata().getGeneration()).as(description).isEqualTo(2L);
      check.accept(changed, updated);
      assertThat(updated.getSpec().getCidr()).isEqualTo("10.20.0.0/24");
      assertThat(updated.getSpec().getBlockSize()).isEqualTo(28);
      assertThat(updated.getSpec().getNetwork()).isEqualTo("blue");
    } finally {
      client.resource(pool).delete();
    }
  }

  static Stream<Arguments> mutableChanges() {
    return Stream.of(
        mutable(
            "rangeEnd moved within the cidr",
            p -> p.getSpec().setRangeEnd("10.20.0.250"),
            (want, got) -> assertThat(got.getSpec().getRangeEnd()).isEqualTo("10.20.0.250")),
        mutable(
            "rangeEnd unset",
            p -> p.getSpec().setRangeEnd(null),
            (want, got) -> assertThat(got.getSpec().getRangeEnd()).isNull()),
        mutable(
            "rangeStart set",
            p -> p.getSpec().setRangeStart("10.20.0.10"),
            (want, got) -> assertThat(got.getSpec().getRangeStart()).isEqualTo("10.20.0.10")),
        mutable(
            "exclude set",
            p -> p.getSpec().setExclude(List.of("10.20.0.64/28", "10.20.0.7")),
            (want, got) ->
                assertThat(got.getSpec().getExclude())
                    .containsExactly("10.20.0.64/28", "10.20.0.7")),
        mutable(
            "reuseDelaySeconds changed",
            p -> p.getSpec().setReuseDelaySeconds(120),
            (want, got) -> assertThat(got.getSpec().getReuseDelaySeconds()).isEqualTo(120)),
        mutable(
            "routes set",
            p -> p.getSpec().setRoutes(List.of(new Route("0.0.0.0/0", "10.20.0.1"))),
            (want, got) ->
                assertThat(got.getSpec().getRoutes())
                    .containsExactly(new Route("0.0.0.0/0", "10.20.0.1"))),
        mutable(
            "gateway moved",
            p -> p.getSpec().setGateway("10.20.0.254"),
            (want, got) -> assertThat(got.getSpec().getGateway()).isEqualTo("10.20.0.254")),
        mutable(
            "maxBlocksPerNode set",
            p -> p.getSpec().setMaxBlocksPerNode(4),
            (want, got) -> assertThat(got.getSpec().getMaxBlocksPerNode()).isEqualTo(4)),
        mutable(
            "nodeSelector set",
            p -> p.getSpec().setNodeSelector(labels("kubernetes.io/os", "linux")),
            (want, got) ->
                assertThat(Selectors.describe(got.getSpec().getNodeSelector()))
                    .isEqualTo("kubernetes.io/os=linux")),
        mutable(
            "namespaceSelector set",
            p -> p.getSpec().setNamespaceSelector(labels("team", "blue")),
            (want, got) ->
                assertThat(Selectors.describe(got.getSpec().getNamespaceSelector()))
                    .isEqualTo("team=blue")));
  }

  private static Arguments mutable(
      String description, Consumer<IPPool> change, BiConsumer<IPPool, IPPool> check) {
    return Arguments.of(description, change, check);
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

  private static String name(IPPool pool) {
    return pool.getMetadata().getName();
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
